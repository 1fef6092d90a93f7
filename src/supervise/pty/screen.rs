//! Whether the job's output left the user's terminal on its alternate screen, read from the bytes
//! relayed: the private modes 47, 1047 and 1049 set (`CSI ? … h`) and reset (`CSI ? … l`), a
//! sequence split across reads included. A job ended by its time limit, a `stop` or a crash in the
//! middle of a full-screen program never leaves it itself; leaving it when not in it would restore
//! a cursor position saved who knows when, so it is left only when the job entered it.

/// The private modes that switch to the alternate screen.
const ALTERNATE: [u32; 3] = [47, 1047, 1049];

/// The longest parameter list followed; a longer one is not a screen switch anyone sends.
const MAX_PARAMS: usize = 8;

/// Where the scanner is within an escape sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    /// After `ESC [`: the first byte tells a private mode (`?`) from anything else.
    Csi,
    /// A private mode's parameters, so far.
    Private,
    /// Any other control sequence, skipped to its final byte.
    Other,
}

/// The scanner of one output stream.
#[derive(Debug)]
pub struct Screen {
    state: State,
    params: [u32; MAX_PARAMS],
    count: usize,
    alternate: bool,
}

impl Default for Screen {
    fn default() -> Screen {
        Screen {
            state: State::Ground,
            params: [0; MAX_PARAMS],
            count: 0,
            alternate: false,
        }
    }
}

impl Screen {
    /// Whether the output so far has the terminal on its alternate screen.
    pub fn alternate(&self) -> bool {
        self.alternate
    }

    /// Reads the next bytes of the stream.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.state = match (self.state, b) {
                (_, 0x1b) => State::Escape,
                (State::Ground, _) => State::Ground,
                (State::Escape, b'[') => State::Csi,
                (State::Escape, _) => State::Ground,
                (State::Csi, b'?') => {
                    self.params = [0; MAX_PARAMS];
                    self.count = 1;
                    State::Private
                }
                (State::Csi | State::Other, 0x40..=0x7e) => State::Ground,
                (State::Csi | State::Other, _) => State::Other,
                (State::Private, b'0'..=b'9') => {
                    let p = &mut self.params[self.count - 1];
                    *p = p.saturating_mul(10).saturating_add(u32::from(b - b'0'));
                    State::Private
                }
                (State::Private, b';') if self.count < MAX_PARAMS => {
                    self.count += 1;
                    State::Private
                }
                (State::Private, b'h' | b'l') => {
                    if self.params[..self.count]
                        .iter()
                        .any(|p| ALTERNATE.contains(p))
                    {
                        self.alternate = b == b'h';
                    }
                    State::Ground
                }
                (State::Private, 0x40..=0x7e) => State::Ground,
                (State::Private, _) => State::Other,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Screen;

    fn after(chunks: &[&[u8]]) -> bool {
        let mut screen = Screen::default();
        for chunk in chunks {
            screen.feed(chunk);
        }
        screen.alternate()
    }

    #[test]
    fn each_switch_is_followed_and_the_last_one_counts() {
        assert!(after(&[b"\x1b[?1049h"]));
        assert!(after(&[b"\x1b[?47h"]));
        assert!(after(&[b"\x1b[?1047h"]));
        assert!(!after(&[b"\x1b[?1049h text \x1b[?1049l"]));
        assert!(after(&[b"\x1b[?25;1049h"]));
        assert!(!after(&[b"plain \x1b[1049h \x1b[31m colour"]));
    }

    #[test]
    fn a_switch_split_across_reads_is_followed() {
        assert!(after(&[b"abc\x1b", b"[?10", b"49", b"h"]));
        assert!(!after(&[b"\x1b[?1049h", b"\x1b[?1049", b"l"]));
    }

    #[test]
    fn other_sequences_and_garbage_leave_it_as_it_was() {
        assert!(after(&[
            b"\x1b[?1049h\x1b[?25l\x1b]0;title\x07\x1b[2J\xff\x9b?1049l"
        ]));
        assert!(!after(&[
            b"\x1b[?1049\x1bh",
            b"\x1b[?99999999999999999999h"
        ]));
        assert!(!after(&[b"\x1b[?1;2;3;4;5;6;7;8;9;1049h"]));
    }
}
