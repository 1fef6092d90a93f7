//! The job's own terminal in interactive mode, relayed to the user's, as sudo's pty monitor or
//! `script(1)` do: a job that shared the user's terminal could push keystrokes into the user's
//! shell with `TIOCSTI` (supervise.md). This module owns the pseudo-terminal pair ([`Pty`]), the
//! child's side of attaching it ([`attach_controlling_terminal`]), the user's terminal in raw mode
//! ([`RawMode`]) and the byte relay between the two ([`Relay`]).
//!
//! It must never hand the job a descriptor of the user's terminal, never change the flags of the
//! user's descriptors (`O_NONBLOCK` lives in the file description the user's shell shares, and
//! would outlive us), never leave the user's terminal raw, and never keep the supervisor alive or
//! keep reading the user's keystrokes once the job's side is gone.
//!
//! The sequence, for the supervisor:
//! 1. [`Pty::open`]; [`Pty::copy_termios`] and [`Pty::copy_winsize`] from the user's terminal;
//! 2. spawn with `setsid` then [`attach_controlling_terminal`] between fork and exec;
//! 3. **drop its own copy of [`Pty::slave`]**: the master reports the end (EOF, or `EIO` on Linux)
//!    only once *every* holder of the slave has closed it;
//! 4. [`RawMode::enter`] on the user's terminal, [`Relay::start`];
//! 5. on SIGWINCH [`Pty::copy_winsize`]; around its own stop for Ctrl-Z [`RawMode::suspend`] and
//!    [`RawMode::resume`];
//! 6. once the job's tree is gone, [`Relay::finish`], [`settle_answers`] (what the terminal still
//!    owes the job's last questions, dropped), then drop the [`RawMode`].

mod answers;
mod attach;
mod direction;
mod model;
mod pair;
mod raw_mode;
mod relay;
mod screen;
mod stoppable;
mod strings;
mod syscall;
mod termios;
#[cfg(test)]
mod tests;
mod worker;

pub use answers::settle_answers;
pub use attach::attach_controlling_terminal;
pub use model::Model;
pub use pair::{set_size, winsize_of, Pty};
pub use raw_mode::RawMode;
pub use relay::{Finished, Relay, RelayEnd};
pub use screen::{Left, ALTERNATE_OFF, MARGINS_OFF, UNFOLLOWED_OFF};
pub use syscall::{read, set_nonblocking};
pub use worker::Worker;
