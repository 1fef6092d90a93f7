//! The stop sequence on a real process tree: a session of its own (so that nothing else of the test
//! process is in the tree), whose shell traps SIGTERM and writes down each one it gets.

use super::*;
use std::io;
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command};

/// Bound of every wait: a hang fails the test instead of hanging it.
const TIMEOUT: Duration = Duration::from_secs(10);

/// `sh` in a session of its own, that notes each SIGTERM in `dir/terms` and goes on; once its trap
/// is set it creates `dir/ready`.
fn stubborn(dir: &Path) -> Child {
    let script = format!(
        "trap 'echo term >> {0}/terms' TERM; : > {0}/ready; while :; do sleep 0.05; done",
        dir.display()
    );
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script);
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| match libc::setsid() {
            -1 => Err(io::Error::last_os_error()),
            _ => Ok(()),
        });
    }
    let child = cmd.spawn().expect("spawn sh");
    let deadline = Instant::now() + TIMEOUT;
    while !dir.join("ready").exists() {
        assert!(Instant::now() < deadline, "the shell never set its trap");
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

fn terms(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("terms"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn sigterm_goes_once_to_each_process_within_the_grace_then_sigkill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = stubborn(dir.path());
    let tree = Tree {
        processes: Some(Processes::Session(child.id() as i32)),
        cgroup: None,
    };
    let grace = Duration::from_millis(800);
    let mut stop = Stop::new(grace);
    assert!(stop.round(&tree) >= 1, "the shell is in its session");
    stop.round(&tree);
    stop.round(&tree);
    let deadline = Instant::now() + TIMEOUT;
    while terms(dir.path()) == 0 {
        assert!(Instant::now() < deadline, "the shell never got SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        child.try_wait().expect("try_wait").is_none(),
        "it ignores SIGTERM"
    );

    std::thread::sleep(grace);
    assert!(stop.round(&tree) >= 1);
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "SIGKILL did not end the shell");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert_eq!(terms(dir.path()), 1, "three rounds, one SIGTERM");
}

#[test]
fn a_stop_without_grace_kills_at_once_and_a_tree_of_nothing_has_no_members() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = stubborn(dir.path());
    let tree = Tree {
        processes: Some(Processes::Session(child.id() as i32)),
        cgroup: None,
    };
    assert!(Stop::new(Duration::ZERO).round(&tree) >= 1);
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert_eq!(terms(dir.path()), 0, "no SIGTERM first");
    let nothing = Tree {
        processes: None,
        cgroup: None,
    };
    assert_eq!(Stop::new(Duration::ZERO).round(&nothing), 0);
}
