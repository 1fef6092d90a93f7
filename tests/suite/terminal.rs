//! Interactive mode, driven through a real terminal (tmux): the job gets a terminal of its own,
//! relayed to the user's, which is raw while the job runs and restored exactly afterwards.

use std::fs;
use std::time::Duration;

use crate::support::screen::Screen;
use crate::support::*;

#[test]
fn the_job_gets_its_own_terminal_and_the_users_is_restored() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    screen.run(
        "tty > outer.tty; stty -g > before.stty; echo REA\"\"DY",
        "READY",
    );
    screen.line(&format!(
        "{BIN} run -- sh -c 'tty; echo via-\"\"tty > /dev/tty; stty size; stty -a | grep -o -- -icanon || echo cooked; read x; echo got:$x; exit 4'; echo stat\"\"us=$?"
    ));
    assert!(screen.wait_for("30 120"), "{}", screen.screen());
    screen.line("hello");
    assert!(screen.wait_for("status=4"), "{}", screen.screen());
    screen.run("stty -g > after.stty; echo DO\"\"NE", "DONE");
    let text = screen.screen();
    assert!(
        text.contains("got:hello") && text.contains("status=4"),
        "{text}"
    );
    assert!(
        text.contains("cooked"),
        "the job's terminal should be in the user's (cooked) mode: {text}"
    );
    let outer = screen.file("outer.tty");
    let inner = text
        .lines()
        .find(|l| l.starts_with("/dev/pts/"))
        .expect("the job's tty");
    assert_ne!(
        inner.trim(),
        outer.trim(),
        "the job shares the user's terminal"
    );
    assert_eq!(
        screen.file("before.stty"),
        screen.file("after.stty"),
        "terminal settings not restored"
    );
}

#[test]
fn a_resize_reaches_the_job() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    screen.line(&format!("{BIN} run -- sh -c 'trap \"stty size; exit 0\" WINCH; echo WAIT\"\"ING; while :; do sleep 0.1; done'"));
    assert!(screen.wait_for("WAITING"), "{}", screen.screen());
    screen.tmux(&["resize-window", "-t", "main", "-x", "100", "-y", "25"]);
    assert!(screen.wait_for("25 100"), "{}", screen.screen());
}

#[test]
fn ctrl_c_ends_a_job_that_does_not_trap_it_with_130() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    screen.line(&format!(
        "{BIN} run -- sh -c 'echo WAIT\"\"ING; sleep 60'; echo stat\"\"us=$?"
    ));
    assert!(screen.wait_for("WAITING"), "{}", screen.screen());
    screen.key("C-c");
    assert!(screen.wait_for("status=130"), "{}", screen.screen());
}

#[test]
fn tiocsti_from_the_job_does_not_reach_the_users_shell() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    let marker = env.path().join("INJECTED");
    let inject = format!(
        "import fcntl, termios\nfor c in b'touch {}\\n': fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))\nprint('tr' + 'ied')",
        marker.display()
    );
    fs::write(env.path().join("inject.py"), inject).unwrap();
    screen.line(&format!(
        "{BIN} run -- python3 inject.py; echo stat\"\"us=$?"
    ));
    assert!(screen.wait_for("status="), "{}", screen.screen());
    screen.run("echo AFT\"\"ER", "AFTER");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        screen.screen().contains("tried"),
        "the injection did not run: {}",
        screen.screen()
    );
    assert!(
        !marker.exists(),
        "a keystroke injected by the job ran in the user's shell"
    );
}

#[test]
fn ctrl_z_stops_the_job_and_isolate_and_fg_restores_both() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    screen.run("stty -g > before.stty; echo REA\"\"DY", "READY");
    screen.line(&format!(
        "{BIN} run -- sh -c 'echo WAIT\"\"ING; read x; echo got:$x'; echo stat\"\"us=$?"
    ));
    assert!(screen.wait_for("WAITING"), "{}", screen.screen());
    screen.key("C-z");
    assert!(
        screen.wait_for("Stopped"),
        "isolate did not stop: {}",
        screen.screen()
    );
    screen.run("stty -g > stopped.stty; echo SAV\"\"ED", "SAVED");
    assert_eq!(
        screen.file("before.stty"),
        screen.file("stopped.stty"),
        "terminal not restored while stopped"
    );
    screen.line("fg");
    std::thread::sleep(Duration::from_millis(500));
    screen.line("resumed");
    // `fg` resumed isolate alone (the shell ran the rest of the line when it stopped).
    assert!(
        screen.wait_for("exited with status 0"),
        "{}",
        screen.screen()
    );
    assert!(screen.screen().contains("got:resumed"));
    screen.run("stty -g > after.stty; echo DO\"\"NE", "DONE");
    assert_eq!(screen.file("before.stty"), screen.file("after.stty"));
}

#[test]
fn closing_the_terminal_ends_the_job_and_records_the_end() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    let report = env.path().join("report.json");
    screen.line(&format!(
        "{BIN} run --report {} -- sh -c 'echo WAIT\"\"ING; exec sleep 300'",
        report.display()
    ));
    assert!(screen.wait_for("WAITING"), "{}", screen.screen());
    let pid = env.records()[0]["pid"].as_i64().unwrap() as i32;
    screen.tmux(&["kill-server"]);
    assert!(
        wait_until(Duration::from_secs(20), || report.exists()),
        "no report after the hang-up"
    );
    let value = env.report(&report);
    assert_eq!(value["state"], "killed", "{value}");
    assert!(!alive(pid));
}

#[test]
fn no_pty_passes_the_users_terminal_through() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    screen.run("tty > outer.tty; echo REA\"\"DY", "READY");
    screen.line(&format!(
        "{BIN} run --no-pty -- sh -c 'tty; echo stat\"\"us=$?'"
    ));
    assert!(screen.wait_for("status="), "{}", screen.screen());
    let outer = screen.file("outer.tty");
    assert!(
        screen.screen().contains(outer.trim()),
        "{}",
        screen.screen()
    );
}

#[test]
fn vim_edits_a_file_in_the_worktree_and_bash_keeps_job_control() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let screen = Screen::new(&env);
    let report = env.path().join("vim.json");
    screen.line(&format!(
        "cd {} && {BIN} run --worktree --keep --report {} -- vim -u NONE -N notes.txt",
        repo.display(),
        report.display()
    ));
    assert!(
        screen.wait_for("[New]"),
        "vim did not start: {}",
        screen.screen()
    );
    screen.send("iwritten in vim");
    screen.key("Escape");
    screen.line(":wq");
    assert!(
        wait_until(Duration::from_secs(20), || report.exists()),
        "{}",
        screen.screen()
    );
    let value = env.report(&report);
    let wt = std::path::PathBuf::from(value["worktree"]["path"].as_str().unwrap());
    assert_eq!(
        fs::read_to_string(wt.join("notes.txt")).unwrap(),
        "written in vim\n"
    );

    screen.line(&format!(
        "PS1='in''ner$ ' {BIN} run -- bash --norc --noprofile -i"
    ));
    assert!(
        screen.wait_for("inner$"),
        "bash did not start: {}",
        screen.screen()
    );
    screen.line("sleep 30 & jobs; echo JO\"\"BS=$(jobs | wc -l); kill %1; exit");
    assert!(screen.wait_for("JOBS=1"), "{}", screen.screen());
}
