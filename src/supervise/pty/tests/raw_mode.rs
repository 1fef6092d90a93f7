//! Raw mode: entered, suspended, restored to the exact settings, refused on what is no terminal.

use super::*;

#[test]
fn raw_mode_restores_the_exact_settings() {
    let user = Pty::open().expect("open");
    unusual_settings(&user.slave);
    let original = settings(&user.slave);

    let mut raw = RawMode::enter(user.slave.as_fd()).expect("enter");
    let entered = settings(&user.slave);
    assert_eq!(
        entered.lflag & (libc::ICANON | libc::ECHO | libc::ISIG | libc::IEXTEN),
        0
    );
    assert_eq!(entered.iflag & (libc::ICRNL | libc::IXON), 0);
    assert_eq!(entered.oflag & libc::OPOST, 0);
    assert_eq!(entered.cc[libc::VMIN], 1);
    assert_eq!(
        entered.ospeed, original.ospeed,
        "the line itself is left alone"
    );

    raw.suspend().expect("suspend");
    assert_eq!(settings(&user.slave), original, "suspended");
    raw.suspend().expect("suspend twice");
    assert_eq!(settings(&user.slave), original, "suspended twice");
    raw.resume().expect("resume");
    assert_eq!(settings(&user.slave), entered, "resumed");
    raw.resume().expect("resume twice");
    assert_eq!(settings(&user.slave), entered, "resumed twice");
    drop(raw);
    assert_eq!(settings(&user.slave), original, "dropped");
}

#[test]
fn dropping_raw_mode_while_suspended_leaves_the_terminal_alone() {
    let user = Pty::open().expect("open");
    let mut raw = RawMode::enter(user.slave.as_fd()).expect("enter");
    raw.suspend().expect("suspend");
    // The shell changes the settings while the supervisor is stopped.
    unusual_settings(&user.slave);
    let shells = settings(&user.slave);
    drop(raw);
    assert_eq!(settings(&user.slave), shells);
}

#[test]
fn raw_mode_refuses_what_is_not_a_terminal() {
    let (read_end, _write_end) = pipe().expect("pipe");
    let err = RawMode::enter(read_end.as_fd())
        .err()
        .expect("not a terminal");
    assert_eq!(err.raw_os_error(), Some(libc::ENOTTY));
}
