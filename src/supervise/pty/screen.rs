//! What of the user's terminal the job's output left changed that is unsafe to reset blindly, read
//! from the bytes relayed, a sequence split across reads included: the alternate screen (the
//! private modes 47, 1047 and 1049 set, `CSI ? … h`, and reset, `CSI ? … l`), and the scroll
//! region or origin mode (`CSI … r`, `CSI ? 6 h`). A job ended by its time limit, a `stop` or a
//! crash in the middle of a full-screen program never resets them itself; but leaving the
//! alternate screen when not in it restores a cursor position saved who knows when, and resetting
//! the scroll region moves the cursor home, so each is reset only when the job changed it.

/// The whole screen scrolls again, in absolute positions, and the cursor, which that sends home,
/// goes to a fresh line at the bottom: sent only where the output set a scroll region or origin
/// mode (`Left::margins`).
pub const MARGINS_OFF: &[u8] = b"\x1b[?6l\x1b[r\x1b[999;1H\r\n";

/// Leaves the alternate screen: sent only where the output entered it and did not leave it
/// (`Left::alternate_screen`).
pub const ALTERNATE_OFF: &[u8] = b"\x1b[?1049l";

/// What no scanner here follows and is harmless to reset whatever it was: focus reports, insert
/// mode, the character sets (and a shift to the second), autowrap back on, and the keyboard's
/// extended reports (xterm's modifyOtherKeys to 0, its default: `>4;0`, so that a terminal that
/// takes it for colours underlines and then resets; every set of the kitty protocol's flags
/// popped, which a terminal without it ignores): left on, Ctrl-C and Enter reached the user's
/// shell as escape sequences.
pub const UNFOLLOWED_OFF: &[u8] = b"\x1b[?1004l\x1b[4l\x1b(B\x1b)B\x0f\x1b[?7h\x1b[>4;0m\x1b[<99u";

/// The private modes that switch to the alternate screen.
const ALTERNATE: [u32; 3] = [47, 1047, 1049];

/// Where the scanner is within an escape sequence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    Escape,
    /// After `ESC [`: the first byte tells a private mode (`?`) from anything else.
    Csi,
    /// A private mode's parameters, so far.
    Private,
    /// Any other control sequence, skipped to its final byte.
    Other,
    /// An operating system command (`ESC ]`), to its end.
    Osc,
    /// A device control string (`ESC P`), to its end.
    Dcs,
}

/// What the output left changed, of what is reset only where it was (see the module), and
/// whether it asked the terminal something: a report (`CSI c`, `CSI n`, `CSI t`, `CSI $ p`), an
/// OSC query (`…;?`), a DCS request. Its answer is owed to the job, and settled at its end
/// (answers.rs) only where one was asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Left {
    pub alternate_screen: bool,
    pub margins: bool,
    pub asked: bool,
}

impl Left {
    /// As one byte, for an atomic shared with the thread that reads the output.
    pub fn bits(self) -> u8 {
        u8::from(self.alternate_screen) | u8::from(self.margins) << 1 | u8::from(self.asked) << 2
    }

    pub fn from_bits(bits: u8) -> Left {
        Left {
            alternate_screen: bits & 1 != 0,
            margins: bits & 2 != 0,
            asked: bits & 4 != 0,
        }
    }
}

/// The scanner of one output stream.
#[derive(Debug, Default)]
pub struct Screen {
    state: State,
    /// The private mode's parameter being read.
    param: u32,
    /// What the private mode's parameters so far name, however many there are (a terminal
    /// follows a list of any length: a job's `CSI ? 1;1;…;1049 h` switched all the same).
    names: Names,
    /// The control sequence holds a `$` (`CSI … $ p` asks for a mode).
    dollar: bool,
    left: Left,
}

/// Of a private mode's parameters, those the scanner follows.
#[derive(Debug, Clone, Copy, Default)]
struct Names {
    alternate: bool,
    origin: bool,
}

impl Screen {
    /// What the output so far left changed.
    pub fn left(&self) -> Left {
        self.left
    }

    /// The parameter just read, ended by `;` or the final byte.
    fn name_param(&mut self) {
        self.names.alternate |= ALTERNATE.contains(&self.param);
        self.names.origin |= self.param == 6;
        self.param = 0;
    }

    /// Reads the next bytes of the stream.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.state = match (self.state, b) {
                (_, 0x1b) => State::Escape,
                (State::Ground, _) => State::Ground,
                (State::Escape, b'[') => {
                    self.dollar = false;
                    State::Csi
                }
                (State::Escape, b']') => State::Osc,
                (State::Escape, b'P') => {
                    self.left.asked = true;
                    State::Dcs
                }
                (State::Escape, _) => State::Ground,
                (State::Osc, b'?') => {
                    self.left.asked = true;
                    State::Osc
                }
                (State::Osc, 0x07) => State::Ground,
                (State::Osc, _) => State::Osc,
                (State::Dcs, _) => State::Dcs,
                (State::Csi | State::Private | State::Other, b'$') => {
                    self.dollar = true;
                    State::Other
                }
                (State::Csi | State::Other, b'c' | b'n' | b't') | (State::Private, b'n' | b'u') => {
                    self.left.asked = true;
                    State::Ground
                }
                (State::Csi | State::Other | State::Private, b'p') if self.dollar => {
                    self.left.asked = true;
                    State::Ground
                }
                (State::Csi, b'?') => {
                    self.param = 0;
                    self.names = Names::default();
                    State::Private
                }
                (State::Csi | State::Other, b'r') => {
                    self.left.margins = true;
                    State::Ground
                }
                (State::Csi | State::Other, 0x40..=0x7e) => State::Ground,
                (State::Csi | State::Other, _) => State::Other,
                (State::Private, b'0'..=b'9') => {
                    self.param = self
                        .param
                        .saturating_mul(10)
                        .saturating_add(u32::from(b - b'0'));
                    State::Private
                }
                (State::Private, b';') => {
                    self.name_param();
                    State::Private
                }
                (State::Private, b'h' | b'l') => {
                    self.name_param();
                    if self.names.alternate {
                        self.left.alternate_screen = b == b'h';
                    }
                    self.left.margins |= b == b'h' && self.names.origin;
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
        screen.left().alternate_screen
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
    fn a_scroll_region_or_origin_mode_is_seen() {
        let margins = |chunks: &[&[u8]]| {
            let mut screen = Screen::default();
            chunks.iter().for_each(|c| screen.feed(c));
            screen.left().margins
        };
        assert!(margins(&[b"\x1b[2;", b"4r"]));
        assert!(margins(&[b"\x1b[?6h"]));
        assert!(!margins(&[b"\x1b[?6l\x1b[31mred\x1b[2J\x1b[?1049h"]));
    }

    #[test]
    fn a_question_to_the_terminal_is_seen_and_nothing_else_is_one() {
        let asked = |chunks: &[&[u8]]| {
            let mut screen = Screen::default();
            chunks.iter().for_each(|c| screen.feed(c));
            screen.left().asked
        };
        for question in [
            &b"\x1b[c"[..],
            b"\x1b[>c",
            b"\x1b[6n",
            b"\x1b[?6n",
            b"\x1b[14t",
            b"\x1b[?2026$p",
            b"\x1b[?u",
            b"\x1b]11;?\x07",
            b"\x1bP$qm\x1b\\",
        ] {
            assert!(asked(&[b"text ", question]), "{question:?}");
        }
        assert!(asked(&[b"\x1b[", b"6", b"n"]));
        assert!(!asked(&[
            b"plain \x1b[31mred\x1b[0m \x1b[?1049h\x1b[2J\x1b[H\x1b[u\x1b]0;title\x07 c n t"
        ]));
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
        // A list of any length is followed, as terminals follow it.
        assert!(after(&[b"\x1b[?1;2;3;4;5;6;7;8;9;1049h"]));
        assert!(after(&[b"\x1b[?1;1;1;1;1;1;1;1;1049h"]));
    }
}
