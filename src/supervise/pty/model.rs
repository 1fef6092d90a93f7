//! The screen model of a job's terminal (`attach`: the hub's screen to replay, the client's modes
//! to restore): `vt100`'s parser, fed through the control-string bound (strings.rs), and the
//! scanner of what `vt100` does not tell (screen.rs).

use super::screen::Screen;
use super::strings::Strings;

/// A `vt100` screen model that reads the job's output through [`Strings`], with what `vt100`
/// does not tell of it (a scroll region set: screen.rs).
pub struct Model {
    parser: vt100::Parser,
    strings: Strings,
    bounded: Vec<u8>,
    seen: Screen,
}

impl Model {
    pub fn new(rows: std::num::NonZeroU16, cols: std::num::NonZeroU16) -> Model {
        Model {
            parser: vt100::Parser::new(rows, cols, 0),
            strings: Strings::default(),
            bounded: Vec::new(),
            seen: Screen::default(),
        }
    }

    /// Reads the next bytes of the output.
    pub fn process(&mut self, bytes: &[u8]) {
        self.strings.bound(bytes, &mut self.bounded);
        self.parser.process(&self.bounded);
        self.seen.feed(bytes);
    }

    /// Whether the output set a scroll region or origin mode.
    pub fn margins(&self) -> bool {
        self.seen.left().margins
    }

    /// Whether the output asked the terminal something (screen.rs).
    pub fn asked(&self) -> bool {
        self.seen.left().asked
    }

    /// Whether the output left the terminal on the alternate screen, by any of its switches (47,
    /// 1047, 1049: vt100 follows 1049 alone).
    pub fn alternate_screen(&self) -> bool {
        self.seen.left().alternate_screen || self.parser.screen().alternate_screen()
    }

    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    pub fn set_size(&mut self, rows: std::num::NonZeroU16, cols: std::num::NonZeroU16) {
        self.parser.set_size(rows, cols);
    }
}
