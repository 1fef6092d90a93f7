//! The relay: the job's output to the end, the user's input, and the ways it ends.

use super::*;

#[test]
fn relay_ends_when_the_job_exits_although_input_stays_open() {
    let user = Pty::open().expect("open user pty");
    let (master, mut child) = start_job(&user, "echo bye");
    let relay =
        Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");
    exchange(&user.master, b"", contains("bye"));
    assert!(wait_child(&mut child).success());

    let started = Instant::now();
    assert!(matches!(relay.finish(TIMEOUT).end, RelayEnd::Drained));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    // The user's next keystrokes are the shell's again: nothing of the relay reads them.
    write_all(user.master.as_fd(), b"after\n", user.slave.as_fd()).expect("type");
    assert_eq!(
        read_within(&user.slave, 6),
        b"after\n",
        "all of them, for the shell"
    );
}

#[test]
fn output_written_just_before_the_job_exits_is_relayed_in_full() {
    const SIZE: usize = 300_000;
    let user = Pty::open().expect("open user pty");
    let (master, mut child) = start_job(&user, "head -c 300000 /dev/zero | tr '\\0' a");
    let _raw = RawMode::enter(user.slave.as_fd()).expect("raw");
    let relay =
        Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");
    let (shown, _) = exchange(&user.master, b"", count(b'a', SIZE));
    assert!(wait_child(&mut child).success());
    assert!(matches!(relay.finish(TIMEOUT).end, RelayEnd::Drained));
    assert_eq!(shown.len(), SIZE, "nothing more, nothing less");
}

#[test]
fn a_job_that_never_reads_its_input_does_not_stall_its_output() {
    const OFFERED: usize = 1 << 20;
    let user = Pty::open().expect("open user pty");
    let job = Pty::open().expect("open job pty");
    // Raw, so that the unread input is kept (a canonical line that is full drops it).
    let raw = make_raw(get_termios(job.slave.as_fd()).expect("tcgetattr"));
    set_termios(job.slave.as_fd(), libc::TCSANOW, &raw).expect("tcsetattr");
    let mut child = spawn_on(
        &job.slave,
        "sleep 0.5; head -c 200000 /dev/zero | tr '\\0' b",
    );
    let Pty { master, slave } = job;
    drop(slave);
    let _raw = RawMode::enter(user.slave.as_fd()).expect("raw");
    let relay =
        Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");

    let (_, typed) = exchange(&user.master, &vec![b'k'; OFFERED], count(b'b', 200_000));
    assert!(
        typed < OFFERED,
        "the input was blocked all along (typed {typed} bytes)"
    );
    assert!(wait_child(&mut child).success());
    let started = Instant::now();
    assert!(matches!(relay.finish(TIMEOUT).end, RelayEnd::Drained));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn relay_waits_for_every_holder_of_the_slave() {
    let user = Pty::open().expect("open user pty");
    let (master, mut child) = start_job(&user, "trap '' HUP; (sleep 0.3; echo late) & echo early");
    let relay =
        Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");
    assert!(wait_child(&mut child).success());
    // The main process is gone, its background child still writes to the terminal.
    assert!(matches!(relay.finish(TIMEOUT).end, RelayEnd::Drained));
    exchange(&user.master, b"", contains("late"));
}

#[test]
fn finish_times_out_while_the_supervisor_still_holds_the_slave() {
    let user = Pty::open().expect("open user pty");
    let job = Pty::open().expect("open job pty");
    let mut child = spawn_on(&job.slave, "echo done");
    let relay =
        Relay::start(job.master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");
    assert!(wait_child(&mut child).success());
    exchange(&user.master, b"", contains("done"));

    let started = Instant::now();
    let end = relay.finish(Duration::from_millis(300)).end;
    assert!(matches!(end, RelayEnd::TimedOut), "{end:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    // Stopped: what the job's terminal shows from now on stays in the master, unread.
    write_all(job.slave.as_fd(), b"later", job.master.as_fd()).expect("write");
    assert_eq!(read_within(&job.master, 5), b"later");
}

#[test]
fn master_reads_what_is_left_then_eio_once_the_slave_is_closed() {
    let pty = Pty::open().expect("open");
    let Pty { master, slave } = pty;
    write_all(slave.as_fd(), b"left", master.as_fd()).expect("write");
    drop(slave);
    let mut buf = [0u8; 16];
    let n = read(master.as_fd(), &mut buf).expect("buffered data first");
    assert_eq!(&buf[..n], b"left");
    let err = read(master.as_fd(), &mut buf).expect_err("then the end");
    assert_eq!(err.raw_os_error(), Some(libc::EIO), "Linux says EIO, not 0");
    assert_eq!(read_master(master.as_fd(), &mut buf).expect("EOF"), 0);
}
