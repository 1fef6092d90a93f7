//! The attach channel's frames, client to supervisor: keystrokes and window sizes, each a kind byte,
//! a big-endian length and that many bytes. The other way is the job's terminal output as it is.
//! A frame the supervisor cannot read ends that client's attach, never the job.

/// The most bytes one frame carries.
const MAX: usize = 64 << 10;
const INPUT: u8 = 1;
const RESIZE: u8 = 2;

/// What a client sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// Bytes for the job's terminal, as typed.
    Input(Vec<u8>),
    /// The client's window size.
    Resize { rows: u16, cols: u16 },
}

impl Frame {
    pub fn encode(&self) -> Vec<u8> {
        let (kind, body) = match self {
            Frame::Input(bytes) => (INPUT, bytes.clone()),
            Frame::Resize { rows, cols } => {
                (RESIZE, [rows.to_be_bytes(), cols.to_be_bytes()].concat())
            }
        };
        let mut out = vec![kind];
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        out.extend_from_slice(&body);
        out
    }
}

/// A frame that is not one.
#[derive(Debug, PartialEq, Eq)]
pub struct Bad;

/// The frames of a byte stream, as it arrives.
#[derive(Debug, Default)]
pub struct Frames {
    buf: Vec<u8>,
}

impl Frames {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole frame, `None` until one has arrived.
    pub fn next(&mut self) -> Result<Option<Frame>, Bad> {
        let Some((&kind, rest)) = self.buf.split_first() else {
            return Ok(None);
        };
        let Some(len) = rest.get(..4) else {
            return Ok(None);
        };
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        if len > MAX {
            return Err(Bad);
        }
        let Some(body) = rest.get(4..4 + len) else {
            return Ok(None);
        };
        let frame = match (kind, body) {
            (INPUT, body) => Frame::Input(body.to_vec()),
            (RESIZE, &[r0, r1, c0, c1]) => Frame::Resize {
                rows: u16::from_be_bytes([r0, r1]),
                cols: u16::from_be_bytes([c0, c1]),
            },
            _ => return Err(Bad),
        };
        self.buf.drain(..5 + len);
        Ok(Some(frame))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_in_pieces_and_bad_ones_are_refused() {
        let sent = [
            Frame::Input(b"ls\r".to_vec()),
            Frame::Resize {
                rows: 40,
                cols: 120,
            },
            Frame::Input(Vec::new()),
        ];
        let bytes: Vec<u8> = sent.iter().flat_map(Frame::encode).collect();
        let mut frames = Frames::default();
        let mut got = Vec::new();
        for byte in bytes {
            frames.push(&[byte]);
            while let Some(f) = frames.next().unwrap() {
                got.push(f);
            }
        }
        assert_eq!(got, sent);
        let mut bad = Frames::default();
        bad.push(&[9, 0, 0, 0, 0]);
        assert_eq!(bad.next(), Err(Bad));
        let mut huge = Frames::default();
        huge.push(&[1, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(huge.next(), Err(Bad));
    }
}
