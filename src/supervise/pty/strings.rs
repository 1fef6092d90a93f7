//! A bound on the control strings (OSC, DCS, SOS, PM, APC) of a job's output before a screen model
//! reads them: `vt100`'s parser keeps the whole of one in memory until its terminator, so a job that
//! printed `ESC ] 0 ;` and a gigabyte with none grew the supervisor of a `--tty` job and an
//! `attach` client by as much. What lies beyond `LIMIT` bytes of one string is dropped until its
//! terminator, which is passed on; no title, no clipboard write the model keeps is that long. Only
//! what the model reads is cut: the log and the client's terminal get every byte.

/// The most of one control string the model reads.
const LIMIT: usize = 4096;

/// Where the filter is in the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    /// Inside a control string: this many of its bytes passed so far.
    String(usize),
}

/// The filter of one output stream.
#[derive(Debug)]
pub struct Strings {
    state: State,
}

impl Default for Strings {
    fn default() -> Strings {
        Strings {
            state: State::Ground,
        }
    }
}

impl Strings {
    /// `input` as the model may read it, in `out` (cleared first).
    pub fn bound(&mut self, input: &[u8], out: &mut Vec<u8>) {
        out.clear();
        for &b in input {
            let (next, keep) = match (self.state, b) {
                (_, 0x1b) => (State::Escape, true),
                // DCS, SOS, OSC, PM, APC as eight-bit controls.
                (State::Ground, 0x90 | 0x98 | 0x9d..=0x9f) => (State::String(0), true),
                (State::Ground, _) => (State::Ground, true),
                (State::Escape, b'P' | b'X' | b']' | b'^' | b'_') => (State::String(0), true),
                (State::Escape, _) => (State::Ground, true),
                // BEL ends an OSC; CAN and SUB abort a string; ESC (above) starts `ESC \`. The
                // eight-bit ST (0x9c) ends none: vte keeps it in an OSC, which would go on
                // unbounded past a bound that took it for the end.
                (State::String(_), 0x07 | 0x18 | 0x1a) => (State::Ground, true),
                (State::String(n), _) => (State::String(n.saturating_add(1)), n < LIMIT),
            };
            self.state = next;
            if keep {
                out.push(b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Strings, LIMIT};

    #[test]
    fn a_long_string_is_cut_and_its_terminator_kept() {
        let mut strings = Strings::default();
        let mut out = Vec::new();
        let mut seen = Vec::new();
        strings.bound(b"before\x1b]0;", &mut out);
        seen.extend_from_slice(&out);
        for _ in 0..100 {
            strings.bound(&[b'A'; 1000], &mut out);
            seen.extend_from_slice(&out);
        }
        strings.bound(b"\x07after\x1bPq", &mut out);
        seen.extend_from_slice(&out);
        strings.bound(&[b'#'; 5000], &mut out);
        seen.extend_from_slice(&out);
        strings.bound(b"\x1b\\done", &mut out);
        seen.extend_from_slice(&out);
        let text = String::from_utf8(seen).unwrap();
        assert!(text.starts_with("before\x1b]0;AAA"));
        assert_eq!(text.matches('A').count(), LIMIT - 2, "\"0;\" counts");
        assert_eq!(text.matches('#').count(), LIMIT - 1);
        assert!(
            text.contains("\x07after\x1bPq") && text.ends_with("\x1b\\done"),
            "{text:?}"
        );
    }

    #[test]
    fn an_eight_bit_st_ends_no_string() {
        let mut strings = Strings::default();
        let mut out = Vec::new();
        let mut kept = 0;
        strings.bound(b"\x1b]0;", &mut out);
        for _ in 0..10 {
            let mut chunk = vec![b'A'; 4000];
            chunk.push(0x9c);
            strings.bound(&chunk, &mut out);
            kept += out.len();
        }
        assert!(kept <= LIMIT, "{kept}");
    }

    #[test]
    fn ordinary_output_and_short_strings_pass_whole() {
        let mut strings = Strings::default();
        let mut out = Vec::new();
        let text = "plain \x1b[31mred\x1b[0m \x1b]0;title\x07 日本 \x1b]52;c;aGk=\x1b\\";
        strings.bound(text.as_bytes(), &mut out);
        assert_eq!(out, text.as_bytes());
    }
}
