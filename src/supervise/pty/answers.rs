//! The answers a terminal still owes the job once the relay has stopped reading the keyboard: a
//! job that asks the terminal something as it ends (its attributes, `CSI c`; the cursor's place,
//! `CSI 6 n`) is answered after isolate has stopped reading, and the answer is then read by the
//! user's shell as if typed (`1;2c` run as a command; on terminals that echo a title or a setting
//! back, text the job chose). isolate asks a question of its own, the status report (`CSI 5 n`),
//! which a terminal answers after every earlier one, and reads the keyboard, dropping what comes,
//! until that answer arrives or `WAIT` has passed.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// The question, and how the answer ends (`CSI 0 n`, or `CSI 3 n` from a terminal with a fault).
const QUESTION: &[u8] = b"\x1b[5n";
const ANSWERS: [&[u8]; 2] = [b"\x1b[0n", b"\x1b[3n"];

/// How long a terminal that does not answer the status report holds the end (every VT100 answers
/// it within milliseconds).
const WAIT: Duration = Duration::from_millis(500);

/// Asks the status report on `output` and drops what `input` (the user's terminal, in raw mode)
/// brings until its answer. What the user typed in those milliseconds is dropped with it.
pub fn settle_answers(input: BorrowedFd<'_>, output: BorrowedFd<'_>) -> io::Result<()> {
    nix::unistd::write(output, QUESTION)?;
    let deadline = Instant::now() + WAIT;
    // The last bytes read, enough to hold an answer. One byte a read: what the user types after
    // the answer stays for the shell.
    let mut tail: Vec<u8> = Vec::with_capacity(16);
    let mut buf = [0u8; 1];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        let mut fds = [PollFd::new(input.as_fd(), PollFlags::POLLIN)];
        let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
        match poll(&mut fds, timeout) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
        match nix::unistd::read(input, &mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => tail.push(buf[0]),
            Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => continue,
            Err(e) => return Err(e.into()),
        }
        if ANSWERS.iter().any(|a| tail.ends_with(a)) {
            return Ok(());
        }
        let keep = tail.len().saturating_sub(8);
        tail.drain(..keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::pipe::pipe;

    #[test]
    fn what_comes_before_the_answer_is_dropped_and_the_rest_is_left() {
        let (question_rx, question_tx) = pipe().unwrap();
        let (keys_rx, keys_tx) = pipe().unwrap();
        nix::unistd::write(&keys_tx, b"\x1b[?1;2c\x1b[12;1R\x1b[0").unwrap();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            nix::unistd::write(&keys_tx, b"nls\r").unwrap();
        });
        settle_answers(keys_rx.as_fd(), question_tx.as_fd()).unwrap();
        writer.join().unwrap();
        let mut asked = [0u8; 8];
        let n = nix::unistd::read(question_rx.as_fd(), &mut asked).unwrap();
        assert_eq!(&asked[..n], QUESTION);
        let mut rest = [0u8; 8];
        let n = nix::unistd::read(keys_rx.as_fd(), &mut rest).unwrap();
        assert_eq!(&rest[..n], b"ls\r");
    }

    #[test]
    fn a_terminal_that_never_answers_does_not_hold_the_end_for_good() {
        let (_question_rx, question_tx) = pipe().unwrap();
        let (keys_rx, _keys_tx) = pipe().unwrap();
        settle_answers(keys_rx.as_fd(), question_tx.as_fd()).unwrap();
    }
}
