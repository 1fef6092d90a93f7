//! Background jobs with a terminal (`run --tty`) and `attach`, driven through real terminals
//! (tmux): the current screen on attach, typing, resizing, Ctrl-C, detaching and attaching again,
//! a second attach taking over, a foreground `--tty` job detached, and the attach socket closed to
//! the job itself.

use std::fs;
use std::time::Duration;

use crate::support::screen::Screen;
use crate::support::*;

/// Starts `bash -i` (prompt `inner$ `) with `run ARGS`; its id.
fn start_shell(env: &TestEnv, screen: &Screen, args: &str) -> String {
    start(
        env,
        screen,
        &format!("{args} -- env PS1='in''ner$ ' bash --norc --noprofile -i"),
    )
}

/// `isolate run RUN` typed into the screen's shell, its id written to a file; the id, once there.
fn start(env: &TestEnv, screen: &Screen, run: &str) -> String {
    screen.line(&format!(
        "{BIN} run {run} > {}",
        env.path().join("id").display()
    ));
    assert!(wait_until(Duration::from_secs(20), || !screen
        .file("id")
        .trim()
        .is_empty()));
    screen.file("id").trim().to_string()
}

fn state(env: &TestEnv, id: &str) -> String {
    let out = env.isolate(env.path(), ["status", id, "--json"]);
    let record: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    record["state"].as_str().unwrap_or_default().to_string()
}

/// The pane cleared of what the outer shell printed, so that what shows next is the attach's own.
fn clear(screen: &Screen) {
    screen.line("clear");
    screen.tmux(&["clear-history", "-t", "main"]);
}

#[test]
fn a_background_job_with_a_terminal_is_attached_typed_into_resized_detached_and_attached_again() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    let id = start_shell(&env, &screen, "--bg --tty");
    assert_eq!(state(&env, &id), "running");

    screen.line(&format!("{BIN} attach {id}"));
    assert!(screen.wait_for("inner$"), "{}", screen.screen());
    screen.line("echo typed-$((6*7))");
    assert!(screen.wait_for("typed-42"), "{}", screen.screen());
    screen.tmux(&["resize-window", "-t", "main", "-x", "91", "-y", "27"]);
    std::thread::sleep(Duration::from_millis(300));
    screen.line("stty size");
    assert!(screen.wait_for("27 91"), "{}", screen.screen());
    screen.line("sleep 100");
    std::thread::sleep(Duration::from_millis(300));
    screen.key("C-c");
    screen.line("echo after-ctrl-c");
    assert!(screen.wait_for("after-ctrl-c\n"), "{}", screen.screen());

    screen.key("C-\\");
    screen.key("C-\\");
    assert!(screen.wait_for("detached from"), "{}", screen.screen());
    assert_eq!(state(&env, &id), "running", "detaching ended the job");

    // Attached again, the screen is the job's as it is now, not blank.
    clear(&screen);
    screen.line(&format!("{BIN} attach {id}"));
    assert!(screen.wait_for("after-ctrl-c"), "{}", screen.screen());
    screen.line("exit 3");
    assert!(screen.wait_for("exited"), "{}", screen.screen());
    assert_eq!(
        env.isolate(env.path(), ["wait", &id]).status.code(),
        Some(3)
    );
    let log = fs::read_to_string(env.state.join("jobs").join(&id).join("output.log")).unwrap();
    assert!(
        log.contains("typed-42"),
        "the terminal's output is logged: {log:?}"
    );
}

#[test]
fn a_second_attach_takes_over_and_the_first_is_told() {
    let env = TestEnv::new();
    let first = Screen::new(&env);
    let id = start_shell(&env, &first, "--bg --tty");
    first.line(&format!("{BIN} attach {id}"));
    assert!(first.wait_for("inner$"), "{}", first.screen());
    let second = Screen::new_named(&env, "second");
    second.line(&format!("{BIN} attach {id}"));
    assert!(second.wait_for("inner$"), "{}", second.screen());
    assert!(
        first.wait_for("attached from another terminal"),
        "{}",
        first.screen()
    );
    assert_eq!(state(&env, &id), "running");
    second.line("echo from-second");
    assert!(second.wait_for("from-second\n"), "{}", second.screen());
    second.line("exit");
    assert!(second.wait_for("exited"), "{}", second.screen());
}

#[test]
fn a_foreground_tty_job_detaches_into_the_background_and_is_attached_again() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    screen.line(&format!(
        "{BIN} run --tty -- env PS1='in''ner$ ' bash --norc --noprofile -i"
    ));
    assert!(screen.wait_for("inner$"), "{}", screen.screen());
    let ps = env.isolate(env.path(), ["ps", "--json"]);
    let jobs: serde_json::Value = serde_json::from_str(&stdout(&ps)).unwrap();
    let id = jobs[0]["id"].as_str().unwrap().to_string();
    screen.line("echo first-$((1+1))");
    assert!(screen.wait_for("first-2"), "{}", screen.screen());
    screen.key("C-\\");
    screen.key("C-\\");
    assert!(screen.wait_for("detached from"), "{}", screen.screen());
    assert_eq!(state(&env, &id), "running");
    clear(&screen);
    screen.line(&format!("{BIN} attach {id}"));
    assert!(screen.wait_for("first-2"), "{}", screen.screen());
    screen.line("exit");
    assert!(screen.wait_for("exited"), "{}", screen.screen());
}

/// The attach socket is a path-named unix socket outside the job's sandbox: the job cannot
/// connect to it, by its path or through /proc; a job without `--tty` has none, and an attach
/// without a terminal says so.
#[test]
fn the_job_cannot_reach_its_own_attach_socket_and_attach_needs_a_tty_job_and_a_terminal() {
    let env = TestEnv::new();
    let probe = env.probe(
        "probe.py",
        &format!(
            "path = '{}/jobs/' + os.environ['ISOLATE_JOB'] + '/attach.sock'\n\
             time.sleep(0.5)\n\
             attempt('path', lambda: socket.socket(socket.AF_UNIX).connect(path))\n\
             attempt('proc', lambda: socket.socket(socket.AF_UNIX).connect('/proc/self/root' + path))\n\
             print('probed', flush=True)\n\
             time.sleep(30)\n",
            env.state.display()
        ),
    );
    let out = env.isolate(
        env.path(),
        ["run", "--bg", "--tty", "--", "python3", &probe],
    );
    assert_status(&out, 0);
    let id = stdout(&out).trim().to_string();
    let log = env.state.join("jobs").join(&id).join("output.log");
    assert!(wait_until(Duration::from_secs(20), || fs::read_to_string(
        &log
    )
    .unwrap_or_default()
    .contains("probed")));
    let text = fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains("path: ok") && !text.contains("proc: ok"),
        "{text}"
    );
    assert!(env
        .state
        .join("jobs")
        .join(&id)
        .join("attach.sock")
        .exists());

    let out = env.isolate(env.path(), ["attach", &id]);
    assert_status(&out, 1);
    assert!(
        stderr(&out).contains("needs a terminal"),
        "{}",
        stderr(&out)
    );
    env.isolate(env.path(), ["stop", &id]);

    let out = env.isolate(env.path(), ["run", "--bg", "--", "sleep", "20"]);
    let plain = stdout(&out).trim().to_string();
    let out = env.isolate(env.path(), ["attach", &plain]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("without --tty"), "{}", stderr(&out));
    env.isolate(env.path(), ["stop", &plain]);
}

/// A full-screen program (vim, on its alternate screen) attached to after it drew: the screen is
/// there at once, and keys reach it.
#[test]
fn attaching_to_vim_shows_its_screen_as_it_is() {
    let env = TestEnv::new();
    let file = env.file("notes.txt", "first line of the notes\n");
    let screen = Screen::new(&env);
    let id = start(
        &env,
        &screen,
        &format!("--bg --tty -- vim -u NONE -N -n {}", file.display()),
    );
    std::thread::sleep(Duration::from_millis(500));
    clear(&screen);
    screen.line(&format!("{BIN} attach {id}"));
    assert!(
        screen.wait_for("first line of the notes"),
        "{}",
        screen.screen()
    );
    screen.send(":q!");
    screen.key("Enter");
    assert!(screen.wait_for("exited"), "{}", screen.screen());
}

/// The modes of the pane (tmux's view of the terminal: the alternate screen, mouse reporting, the
/// cursor shown, application cursor keys).
fn modes(screen: &Screen) -> String {
    screen
        .tmux(&[
            "display",
            "-p",
            "-t",
            "main",
            "alt=#{alternate_on} mouse=#{mouse_any_flag} cursor=#{cursor_flag} keys=#{keypad_cursor_flag}",
        ])
        .trim()
        .to_string()
}

/// A job that switches the terminal's modes (the alternate screen, mouse reporting, a hidden
/// cursor, application keys) and waits: however the attach to it ends (the detach key, SIGTERM or
/// SIGHUP to `attach`), the user's terminal is given back as it was: line mode, echo, the normal
/// screen, no mouse reporting.
#[test]
fn every_way_out_of_an_attach_gives_the_terminal_back() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    let id = start(
        &env,
        &screen,
        "--bg --tty -- sh -c \"printf '\\033[?1049h\\033[?1000h\\033[?1006h\\033[?25l\\033[?1hmodes-on'; sleep 60\"",
    );
    let normal = modes(&screen);
    assert_eq!(normal, "alt=0 mouse=0 cursor=1 keys=0");
    let pid = env.path().join("attach.pid");
    for way in ["TERM", "HUP", "detach"] {
        clear(&screen);
        screen.line(&format!(
            "sh -c 'echo $$ > {}; exec {BIN} attach {id}'; echo attach-ended-$?",
            pid.display()
        ));
        assert!(screen.wait_for("modes-on"), "{}", screen.screen());
        assert!(
            wait_until(Duration::from_secs(5), || modes(&screen)
                .starts_with("alt=1 mouse=1")),
            "{way}: the job's modes did not reach the terminal: {}",
            modes(&screen)
        );
        match way {
            "detach" => {
                screen.key("C-\\");
                screen.key("C-\\");
            }
            signal => {
                let pid = fs::read_to_string(&pid).unwrap();
                std::process::Command::new("kill")
                    .args([&format!("-{signal}"), pid.trim()])
                    .status()
                    .unwrap();
            }
        }
        assert!(
            screen.wait_for("attach-ended-"),
            "{way}: {}",
            screen.screen()
        );
        assert_eq!(
            modes(&screen),
            normal,
            "{way}: the terminal keeps the job's modes"
        );
        screen.line(&format!("stty -a > {}", env.path().join("stty").display()));
        assert!(wait_until(Duration::from_secs(5), || screen
            .file("stty")
            .contains("icanon")));
        let stty = screen.file("stty");
        assert!(
            !stty.contains("-icanon") && !stty.contains("-echo "),
            "{way}: the terminal was left raw: {stty}"
        );
        let _ = fs::remove_file(env.path().join("stty"));
        assert_eq!(state(&env, &id), "running", "{way}: leaving ended the job");
    }
    env.isolate(env.path(), ["stop", &id]);
}

/// A client that says its window is 65535x65535 (or 0x0): the job's terminal and the supervisor's
/// model of the screen take a bounded size, and the supervisor (under an address-space limit,
/// where a model of 65535x65535 cells, 137 GB, would abort it) serves on.
#[test]
fn a_client_with_an_absurd_window_size_does_not_bring_the_supervisor_down() {
    use std::io::{Read, Write};
    use std::os::unix::process::CommandExt;
    let env = TestEnv::new();
    let mut cmd = env.isolate_cmd(
        env.path(),
        [
            "run",
            "--bg",
            "--tty",
            "--",
            "sh",
            "-c",
            "while :; do echo size=$(stty size); sleep 0.2; done",
        ],
    );
    // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 4 << 30,
                rlim_max: 4 << 30,
            };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    assert_status(&out, 0);
    let id = stdout(&out).trim().to_string();
    let dir = env.state.join("jobs").join(&id);
    let log = || fs::read_to_string(dir.join("output.log")).unwrap_or_default();
    assert!(
        wait_until(Duration::from_secs(20), || log().contains("size=24 80")),
        "{}",
        log()
    );
    let mut client = std::os::unix::net::UnixStream::connect(dir.join("attach.sock")).unwrap();
    client
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    for (rows, cols) in [(0u16, 0u16), (65535, 65535), (65535, 1), (1, 65535)] {
        let mut frame = vec![2, 0, 0, 0, 4];
        frame.extend_from_slice(&rows.to_be_bytes());
        frame.extend_from_slice(&cols.to_be_bytes());
        client.write_all(&frame).unwrap();
        let mut sink = [0u8; 4096];
        let _ = client.read(&mut sink);
    }
    client.write_all(&[2, 0, 0, 0, 4, 0, 50, 0, 100]).unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || log().contains("size=50 100")),
        "the supervisor did not serve on: {}",
        log()
    );
    assert!(
        !log().contains("size=65535"),
        "the job's terminal took the absurd size: {}",
        log()
    );
    assert_eq!(state(&env, &id), "running");
    env.isolate(env.path(), ["stop", &id]);
}

/// What the user types into an attach is echoed into the job's output log: the job's directory
/// (its log, its socket, its records) is the user's alone, not for other users of the machine.
#[test]
fn the_log_of_what_was_typed_into_a_job_is_not_for_other_users() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let out = env.isolate(env.path(), ["run", "--bg", "--tty", "--", "sleep", "30"]);
    assert_status(&out, 0);
    let id = stdout(&out).trim().to_string();
    let dir = env.state.join("jobs").join(&id);
    let mode = fs::metadata(&dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "jobs/{id} is open to others: {mode:o}");
    env.isolate(env.path(), ["stop", &id]);
}

/// The alternate screen by its older switches (`?1047h`, `?47h`), which vt100 does not follow:
/// a detach left the user's shell on the alternate screen, its scrollback hidden. The switches a
/// terminal follows are read from the job's output as it passes.
#[test]
fn the_alternate_screen_by_any_switch_is_left_on_detach() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    let id = start(
        &env,
        &screen,
        "--bg --tty -- sh -c \"read x; printf '\\033[?1047halt-on'; sleep 60\"",
    );
    clear(&screen);
    screen.line(&format!("{BIN} attach {id}; echo attach-ended-$?"));
    std::thread::sleep(Duration::from_millis(500));
    screen.key("Enter");
    assert!(screen.wait_for("alt-on"), "{}", screen.screen());
    assert!(
        wait_until(Duration::from_secs(5), || modes(&screen)
            .starts_with("alt=1")),
        "the job's switch did not reach the terminal: {}",
        modes(&screen)
    );
    screen.key("C-\\");
    screen.key("C-\\");
    assert!(screen.wait_for("attach-ended-"), "{}", screen.screen());
    assert!(modes(&screen).starts_with("alt=0"), "{}", modes(&screen));
    env.isolate(env.path(), ["stop", &id]);
}
