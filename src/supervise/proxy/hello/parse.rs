//! The server name of a TLS ClientHello (RFC 8446 4.1.2, RFC 6066 3), read from the job's bytes
//! with bounds checked at every field: a record that does not parse names nothing.

/// What the first bytes a client sends through a tunnel say of the name it wants.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Hello {
    /// Nothing yet, or a TLS ClientHello not all here yet.
    Partial,
    /// A TLS ClientHello naming this server (SNI, lowercase, no trailing dot).
    Names(String),
    /// TLS, without a server name, or a handshake that is no ClientHello one can read (another
    /// record first, an empty or overlong one, a message over `MAX_HELLO`).
    Unnamed,
    /// Not TLS.
    Other,
}

/// The largest ClientHello read (a hybrid post-quantum key share makes one of 1.8 kB; TLS allows
/// 16 MiB, which no client sends).
pub(crate) const MAX_HELLO: usize = 1 << 16;
/// The largest TLS record a client may send (RFC 8446 5.1).
const MAX_RECORD: usize = 1 << 14;

/// The server name of the TLS ClientHello at the start of `bytes`, from as many handshake records
/// as the client split it into (RFC 8446 5.1 lets it split a message anywhere): the name is read
/// from the whole message, never from its first record alone.
pub(crate) fn hello(bytes: &[u8]) -> Hello {
    match bytes.first() {
        None => return Hello::Partial,
        Some(0x16) => {}
        Some(_) => return Hello::Other,
    }
    let mut message: Vec<u8> = Vec::new();
    let mut at = 0;
    loop {
        if let Some(len) = message.get(1..4) {
            let len = u32::from_be_bytes([0, len[0], len[1], len[2]]) as usize;
            if message[0] != 1 || len > MAX_HELLO {
                return Hello::Unnamed;
            }
            if let Some(whole) = message.get(..4 + len) {
                return server_name(whole).map_or(Hello::Unnamed, Hello::Names);
            }
        }
        let Some(header) = bytes.get(at..at + 5) else {
            return Hello::Partial;
        };
        let len = u16::from_be_bytes([header[3], header[4]]) as usize;
        // Only handshake records, none empty (RFC 8446 5.1), until the ClientHello is whole.
        if header[0] != 0x16 || len == 0 || len > MAX_RECORD {
            return Hello::Unnamed;
        }
        let Some(fragment) = bytes.get(at + 5..at + 5 + len) else {
            return Hello::Partial;
        };
        message.extend_from_slice(fragment);
        at += 5 + len;
    }
}

/// The server name of a ClientHello handshake message (its type and length first).
pub(super) fn server_name(record: &[u8]) -> Option<String> {
    let mut at = Cursor {
        bytes: record,
        at: 0,
    };
    if at.take(1)?[0] != 1 {
        return None; // not a ClientHello
    }
    at.take(3)?; // handshake length
    at.take(2 + 32)?; // version, random
    let session = at.take(1)?[0] as usize;
    at.take(session)?;
    let suites = at.u16()? as usize;
    at.take(suites)?;
    let compression = at.take(1)?[0] as usize;
    at.take(compression)?;
    let total = at.u16()? as usize;
    let mut ext = Cursor {
        bytes: at.take(total.min(at.bytes.len() - at.at))?,
        at: 0,
    };
    while let (Some(kind), Some(len)) = (ext.u16(), ext.u16()) {
        let data = ext.take(len as usize)?;
        if kind != 0 {
            continue;
        }
        let mut names = Cursor { bytes: data, at: 0 };
        names.u16()?;
        while let Some(name_type) = names.take(1) {
            let len = names.u16()? as usize;
            let name = names.take(len)?;
            if name_type[0] == 0 {
                let name = std::str::from_utf8(name).ok()?;
                return Some(crate::supervise::proxy::allow::normalize(name));
            }
        }
    }
    None
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
}
