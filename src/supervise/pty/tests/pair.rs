//! The job's own terminal: the pair, attaching it, and what the job sees of the user's terminal.

use super::*;

#[test]
fn open_gives_a_close_on_exec_terminal_pair() {
    let pty = Pty::open().expect("open");
    for fd in [&pty.master, &pty.slave] {
        // SAFETY: F_GETFD and isatty only read.
        let fd_flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) };
        assert_ne!(fd_flags & libc::FD_CLOEXEC, 0, "close-on-exec");
        // SAFETY: isatty only reads the descriptor's state.
        assert_eq!(unsafe { libc::isatty(fd.as_raw_fd()) }, 1, "a terminal");
    }
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: ptsname_r writes at most `name.len()` bytes, NUL-terminated.
    let rc = unsafe { libc::ptsname_r(pty.master.as_raw_fd(), name.as_mut_ptr(), name.len()) };
    assert_eq!(rc, 0);
    // SAFETY: NUL-terminated by ptsname_r.
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
    let path = fd_path(&pty.slave);
    assert!(path.starts_with("/dev/pts/"), "{path}");
    assert_eq!(
        name.to_str().expect("utf-8"),
        path,
        "the slave is the master's peer"
    );
}

#[test]
fn job_gets_its_own_terminal_with_the_users_size_and_input() {
    let user = Pty::open().expect("open user pty");
    set_winsize(&user.master, 37, 111);
    let (master, mut child) = start_job(
        &user,
        "stty size; tty; : </dev/tty && echo ctty:ok; read x; echo got:$x",
    );
    let flags = (status_flags(&user.slave), status_flags(&user.slave));
    let raw = RawMode::enter(user.slave.as_fd()).expect("raw");
    let relay =
        Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");

    let (shown, _) = exchange(&user.master, b"hello\n", contains("got:hello"));
    assert!(wait_child(&mut child).success());
    assert!(matches!(relay.finish(TIMEOUT).end, RelayEnd::Drained));
    drop(raw);

    let shown = text(&shown);
    let lines: Vec<&str> = shown.lines().map(|l| l.trim_end_matches('\r')).collect();
    assert!(lines.contains(&"37 111"), "the user's size: {shown:?}");
    assert!(
        lines.contains(&"ctty:ok"),
        "a controlling terminal: {shown:?}"
    );
    let job_tty = lines
        .iter()
        .find(|l| l.starts_with("/dev/pts/"))
        .unwrap_or_else(|| panic!("no tty in {shown:?}"));
    assert_ne!(
        *job_tty,
        fd_path(&user.slave),
        "its own terminal, not the user's"
    );
    assert_eq!(
        (status_flags(&user.slave), status_flags(&user.slave)),
        flags,
        "the user's descriptors keep their flags"
    );
}

#[test]
fn ctrl_c_typed_by_the_user_interrupts_the_job() {
    let user = Pty::open().expect("open user pty");
    let (master, mut child) = start_job(
        &user,
        "trap 'echo caught-int; exit 3' INT; echo ready; while :; do sleep 0.05; done",
    );
    let _raw = RawMode::enter(user.slave.as_fd()).expect("raw");
    let relay =
        Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");

    exchange(&user.master, b"", contains("ready"));
    // In raw mode ^C is a byte like any other; the job's own terminal turns it into SIGINT
    // for its foreground process group, which TIOCSCTTY made the job's.
    exchange(&user.master, b"\x03", contains("caught-int"));
    assert_eq!(wait_child(&mut child).code(), Some(3));
    assert!(matches!(relay.finish(TIMEOUT).end, RelayEnd::Drained));
}

#[test]
fn window_size_change_reaches_the_running_job() {
    let user = Pty::open().expect("open user pty");
    let job = Pty::open().expect("open job pty");
    let mut child = spawn_on(
        &job.slave,
        "trap 'stty size' WINCH; echo ready; while :; do sleep 0.05; done",
    );
    let Pty { master, slave } = job;
    drop(slave);
    let relay =
        Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");
    exchange(&user.master, b"", contains("ready"));

    // What the supervisor does on SIGWINCH.
    set_winsize(&user.master, 50, 132);
    let resized = Pty {
        master,
        slave: user.slave.try_clone().expect("dup"),
    };
    resized
        .copy_winsize(user.slave.as_fd())
        .expect("copy winsize");
    exchange(&user.master, b"", contains("50 132"));

    child.kill().expect("kill");
    wait_child(&mut child);
    assert!(matches!(relay.finish(TIMEOUT).end, RelayEnd::Drained));
}

#[test]
fn copy_termios_gives_the_job_the_users_settings() {
    let user = Pty::open().expect("open user pty");
    unusual_settings(&user.slave);
    let job = Pty::open().expect("open job pty");
    assert_ne!(settings(&job.slave), settings(&user.slave));
    job.copy_termios(user.slave.as_fd()).expect("copy");
    assert_eq!(settings(&job.slave), settings(&user.slave));
}

#[test]
fn attach_on_descriptor_0_keeps_it_across_exec() {
    // dup2(0, 0) would leave close-on-exec set: the job would start without stdin.
    let job = Pty::open().expect("open");
    let (master, slave) = (job.master, job.slave);
    let fd = slave.as_raw_fd();
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg("tty");
    // SAFETY: setsid, dup2, fcntl and ioctl are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 || libc::dup2(fd, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::fcntl(0, libc::F_SETFD, libc::FD_CLOEXEC) < 0 {
                return Err(io::Error::last_os_error());
            }
            attach_controlling_terminal(0)
        });
    }
    let mut child = cmd.spawn().expect("spawn");
    drop(slave);
    let user = Pty::open().expect("open user pty");
    let relay =
        Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");
    assert!(wait_child(&mut child).success(), "stdin is a terminal");
    assert!(matches!(relay.finish(TIMEOUT).end, RelayEnd::Drained));
    exchange(&user.master, b"", contains("/dev/pts/"));
}
