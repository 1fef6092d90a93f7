//! The server name of a TLS ClientHello (RFC 8446 4.1.2, RFC 6066 3), read from the job's bytes
//! with bounds checked at every field: a record that does not parse names nothing.

/// What the first bytes a client sends through a tunnel say of the name it wants.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Hello {
    /// A TLS ClientHello not all here yet: this many bytes of its record are.
    Partial,
    /// A TLS ClientHello naming this server (SNI, lowercase, no trailing dot).
    Names(String),
    /// TLS, without a server name (or one too long to reach in the first record).
    Unnamed,
    /// Not TLS.
    Other,
}

/// The server name of a TLS ClientHello at the start of `bytes` (RFC 8446 4.1.2, RFC 6066 3).
pub(crate) fn hello(bytes: &[u8]) -> Hello {
    if bytes.first() != Some(&0x16) {
        return match bytes.is_empty() {
            true => Hello::Partial,
            false => Hello::Other,
        };
    }
    let Some(len) = bytes
        .get(3..5)
        .map(|l| u16::from_be_bytes([l[0], l[1]]) as usize)
    else {
        return Hello::Partial;
    };
    let Some(record) = bytes.get(5..5 + len) else {
        return Hello::Partial;
    };
    server_name(record).map_or(Hello::Unnamed, Hello::Names)
}

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
