//! One `unix_diag_msg` and its attributes, read from the kernel's reply: the socket, its kind and
//! state, and where it is bound (a file's device and inode, or an abstract name).

use super::Bound;

const UNIX_DIAG_NAME: u16 = 0;
const UNIX_DIAG_VFS: u16 = 1;
/// struct unix_diag_msg.
const DIAG_MSG: usize = 16;

pub(super) fn align(n: usize) -> usize {
    (n + 3) & !3
}

/// One `unix_diag_msg` and its attributes; `None` for a socket that is bound nowhere.
pub(super) fn parse(msg: &[u8]) -> Option<Bound> {
    if msg.len() < DIAG_MSG {
        return None;
    }
    let socket = u32::from_ne_bytes([msg[4], msg[5], msg[6], msg[7]]);
    let mut bound = Bound {
        socket,
        kind: msg[1],
        state: msg[2],
        file: None,
        abstract_name: None,
    };
    let mut attrs = &msg[DIAG_MSG..];
    while attrs.len() >= 4 {
        let len = u16::from_ne_bytes([attrs[0], attrs[1]]) as usize;
        let kind = u16::from_ne_bytes([attrs[2], attrs[3]]);
        if len < 4 || len > attrs.len() {
            break;
        }
        let payload = &attrs[4..len];
        match kind {
            UNIX_DIAG_VFS if payload.len() >= 8 => {
                let ino = u32::from_ne_bytes([payload[0], payload[1], payload[2], payload[3]]);
                let dev = u32::from_ne_bytes([payload[4], payload[5], payload[6], payload[7]]);
                bound.file = Some((dev, ino));
            }
            UNIX_DIAG_NAME => {
                if let Some((0, name)) = payload.split_first() {
                    bound.abstract_name = Some(name.to_vec());
                }
            }
            _ => {}
        }
        attrs = &attrs[align(len).min(attrs.len())..];
    }
    (bound.file.is_some() || bound.abstract_name.is_some()).then_some(bound)
}
