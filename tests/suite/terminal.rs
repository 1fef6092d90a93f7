//! Interactive mode, driven through a real terminal (tmux): the job gets a terminal of its own,
//! relayed to the user's, which is raw while the job runs and restored exactly afterwards.

use std::fs;
use std::process::Command;
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
    // Refused on every terminal, the job's own pty included (the seccomp layer): it would be the
    // job's keystrokes in its own pty only, but a terminal passed through is not (escapes.rs).
    let inject = format!(
        "import errno, fcntl, termios\ntry:\n    for c in b'touch {}\\n': fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))\n    print('tr' + 'ied: ok')\nexcept OSError as e:\n    print('tr' + 'ied:', errno.errorcode[e.errno])",
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
        screen.screen().contains("tried: EPERM"),
        "the injection did not run, or was not refused: {}",
        screen.screen()
    );
    assert!(
        !marker.exists(),
        "a keystroke injected by the job ran in the user's shell"
    );
}

#[test]
fn the_jobs_monitor_on_its_terminal_holds_nothing_of_the_supervisor() {
    // In interactive mode CMD's parent is its monitor, in the job's sandbox and so readable by the
    // job: it must be a process of the job's own (the helper, exec'd with the job's environment),
    // never a copy of the supervisor, whose environment has what the policy removes and whose
    // descriptors are the supervisor's.
    let env = TestEnv::new();
    fs::write(
        env.path().join("probe.sh"),
        "e=$(tr '\\0' '\\n' < /proc/$PPID/environ)\n\
         n=$(printf '%s\\n' \"$e\" | wc -l)\n\
         t=$(printf '%s\\n' \"$e\" | grep -c ghp_the_users)\n\
         f=$(ls /proc/$PPID/fd | wc -l)\n\
         echo \"monitor vars=$n token=$t fds=$f\"\n",
    )
    .unwrap();
    let screen = Screen::new(&env);
    screen.line(&format!(
        "GITHUB_TOKEN=ghp_the_users_token {BIN} run -- sh probe.sh; echo stat\"\"us=$?"
    ));
    assert!(screen.wait_for("status="), "{}", screen.screen());
    let shown = screen.screen();
    let line = shown
        .lines()
        .find(|l| l.starts_with("monitor vars="))
        .unwrap_or_else(|| panic!("no probe line: {shown}"));
    let field = |name: &str| -> usize {
        let at = line.find(&format!("{name}=")).unwrap() + name.len() + 1;
        line[at..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(
        field("vars") > 0,
        "the monitor's environment was not read: {line}"
    );
    assert_eq!(field("token"), 0, "the supervisor's environment: {line}");
    // 0, 1, 2: the terminal.
    assert_eq!(field("fds"), 3, "the supervisor's descriptors: {line}");
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

/// A job that stops its own main process stops isolate as Ctrl-Z does: the rest of its tree is
/// held still until `fg`, or it ran on, unsupervised and past its time limit, for as long as nobody
/// typed `fg` (the review's heartbeat beat on 15 s past `--timeout 5s`).
#[test]
fn a_job_that_stops_itself_stops_its_whole_tree_until_fg() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    let dir = env.path().join("out");
    fs::create_dir(&dir).unwrap();
    let dir = dir.display().to_string();
    screen.line(&format!(
        "{BIN} run --allow-write {dir} -- sh -c '(while :; do echo beat >> out/beats; sleep 0.05; done) & \
         sleep 0.3; echo STOP\"\"PING; kill -TSTP $$; echo BA\"\"CK; sleep 0.3; kill $!'"
    ));
    assert!(
        screen.wait_for("Stopped"),
        "isolate did not stop: {}",
        screen.screen()
    );
    std::thread::sleep(Duration::from_millis(300));
    let stopped = screen.file("out/beats").lines().count();
    std::thread::sleep(Duration::from_secs(1));
    let later = screen.file("out/beats").lines().count();
    assert!(stopped > 0, "the loop never ran: {}", screen.screen());
    assert_eq!(
        stopped, later,
        "the job's loop ran on while isolate was stopped"
    );
    screen.line("fg");
    assert!(
        screen.wait_for("exited with status 0"),
        "{}",
        screen.screen()
    );
    assert!(
        screen.file("out/beats").lines().count() > later,
        "the loop was not continued"
    );
}

/// `stop` of an interactive job whose isolate is stopped with it (Ctrl-Z, or the job stopping
/// itself): the stopped supervisor could not reap, its tree's zombies counted as processes left,
/// and `stop` never returned. It returns once nothing of the tree runs, and the end is recorded.
#[test]
fn stop_ends_a_job_whose_isolate_is_stopped_with_it() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    screen.line(&format!(
        "{BIN} run -- sh -c 'sleep 100 & sleep 0.3; kill -TSTP $$; sleep 100'"
    ));
    assert!(screen.wait_for("Stopped"), "{}", screen.screen());
    let ps = env.isolate(env.path(), ["ps", "--json"]);
    let jobs: serde_json::Value = serde_json::from_slice(&ps.stdout).unwrap();
    let id = jobs[0]["id"].as_str().unwrap().to_string();
    let out = env.isolate(env.path(), ["stop", "--grace", "1s", &id]);
    assert_status(&out, 0);
    screen.line("fg");
    assert!(
        wait_until(Duration::from_secs(20), || {
            let out = env.isolate(env.path(), ["status", "--json", &id]);
            !stdout(&out).contains("\"running\"")
        }),
        "{}",
        screen.screen()
    );
}

/// A job that stops itself where nothing would continue isolate (`script -c`, `ssh -t host CMD`,
/// an orchestrator's pty: no job control in isolate's parent): isolate stopped for good with it,
/// past `--timeout`, and `stop` could not end it. The job is continued and its time limit holds.
#[test]
fn a_job_that_stops_itself_under_a_parent_without_job_control_is_continued() {
    let env = TestEnv::new();
    let out = Command::new("timeout")
        .args(["-s", "KILL", "30", "script", "-qec"])
        .arg(format!(
            "{BIN} run --timeout 3s -- sh -c 'kill -STOP $$; echo CONT\"\"INUED; sleep 30'"
        ))
        .arg("/dev/null")
        .env("ISOLATE_HOME", &env.state)
        .env("HOME", &env.home)
        .current_dir(env.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // 124: the job's time limit (isolate's status, through script -e); timeout's KILL would be 137.
    assert_eq!(out.status.code(), Some(124), "isolate never ended: {text}");
    assert!(
        text.contains("CONTINUED") && text.contains("timed out"),
        "{text}"
    );
}

/// What a job's output switched on in the user's terminal (mouse reports, a hidden cursor) is off
/// again once it ends, as `attach` leaves it.
#[test]
fn modes_the_jobs_output_switched_on_are_off_once_it_ends() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    let modes = || {
        screen.tmux(&[
            "display",
            "-p",
            "-t",
            "main",
            "#{cursor_flag} #{mouse_standard_flag}",
        ])
    };
    assert_eq!(modes().trim(), "1 0", "the terminal's modes before");
    screen.line(&format!(
        "{BIN} run -- printf '\\033[?1000h\\033[?25lSET\\n'; sleep 0.2; echo DO\"\"NE"
    ));
    assert!(screen.wait_for("DONE"), "{}", screen.screen());
    assert_eq!(modes().trim(), "1 0", "{}", screen.screen());
}

/// A full-screen program ended by the time limit never leaves the alternate screen itself: the
/// user's terminal is back on its own screen all the same, and a job that entered and left it is
/// not sent out of it again (that would restore a cursor position saved before).
#[test]
fn a_job_ended_on_the_alternate_screen_leaves_the_users_terminal_on_its_own() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    let alternate = || screen.tmux(&["display", "-p", "-t", "main", "#{alternate_on}"]);
    assert_eq!(alternate().trim(), "0", "the terminal before");
    screen.line(&format!(
        "{BIN} run --timeout 1s -- sh -c 'printf \"\\033[?10\"; sleep 0.1; printf 49h; echo FU\"\"LL; \
         sleep 30'; echo DO\"\"NE"
    ));
    assert!(screen.wait_for("FULL"), "{}", screen.screen());
    assert_eq!(alternate().trim(), "1", "the job never entered it");
    assert!(screen.wait_for("DONE"), "{}", screen.screen());
    assert_eq!(alternate().trim(), "0", "{}", screen.screen());
    assert!(screen.screen().contains("timed out"), "{}", screen.screen());
}

/// A job that asks the terminal something as it ends (its attributes, `CSI c`; the cursor's
/// place, `CSI 6 n`) after output that takes a moment to drain: the answers came once the relay
/// had stopped reading the keyboard, and the user's shell read them as typed (`1;2c: command not
/// found`). They are read and dropped before the shell has the terminal back.
#[test]
fn the_answers_to_a_jobs_last_questions_never_reach_the_users_shell() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    for round in 0..6 {
        screen.line(&format!(
            "{BIN} run -q -- sh -c 'head -c 3000000 /dev/zero | tr \"\\000\" x; \
             printf \"\\033[c\\033[6n\"'; clear; echo RO\"\"UND{round}"
        ));
        assert!(
            screen.wait_for(&format!("ROUND{round}")),
            "{}",
            screen.screen()
        );
        screen.line(&format!("echo typed-af\"\"ter-{round}"));
        assert!(
            screen.wait_for(&format!("typed-after-{round}")),
            "{}",
            screen.screen()
        );
        let shown = screen.screen();
        assert!(
            !shown.contains("not found") && !shown.contains(";2c"),
            "round {round}: {shown}"
        );
    }
}

/// A switch to the alternate screen among many parameters (`CSI ? 1;1;…;1049 h`), which a
/// terminal follows: the scanner stopped at eight and never sent the user back.
#[test]
fn a_switch_to_the_alternate_screen_among_many_parameters_is_left_at_the_end() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    let alternate = || screen.tmux(&["display", "-p", "-t", "main", "#{alternate_on}"]);
    screen.line(&format!(
        "{BIN} run -- printf '\\033[?1;1;1;1;1;1;1;1;1049hFU''LL\\n'; echo DO\"\"NE"
    ));
    assert!(screen.wait_for("DONE"), "{}", screen.screen());
    assert_eq!(alternate().trim(), "0", "{}", screen.screen());
}

/// The rest of what a job's output can leave changed in the user's terminal: insert mode,
/// autowrap off, application cursor keys and keypad, a scroll region with origin mode (which kept
/// the user's next lines in three rows at the top, and isolate's own last line printed over them).
#[test]
fn insert_mode_keypad_and_a_scroll_region_the_job_set_are_reset_once_it_ends() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    let flags = || {
        screen.tmux(&[
            "display",
            "-p",
            "-t",
            "main",
            "#{insert_flag} #{wrap_flag} #{keypad_cursor_flag} #{keypad_flag} #{origin_flag} \
             #{scroll_region_upper}-#{scroll_region_lower}",
        ])
    };
    let before = flags();
    assert_eq!(before.trim(), "0 1 0 0 0 0-29", "the terminal before");
    screen.line(&format!(
        "{BIN} run -- printf '\\033(0\\033[?7l\\033[4h\\033[?1h\\033=\\033[2;4r\\033[?6hSET\\n'; \
         echo DO\"\"NE"
    ));
    assert!(screen.wait_for("DONE"), "{}", screen.screen());
    assert_eq!(flags(), before, "{}", screen.screen());
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

/// Headless (stdin not a terminal), an output stream that is the user's terminal reaches the job
/// as a pipe: it inherited the terminal itself, and with it the user's keystrokes, its modes
/// (changed for good) and its flow (output suspended, isolate's last line hung).
#[test]
fn a_headless_job_gets_no_terminal_of_the_users_to_control() {
    let env = TestEnv::new();
    let screen = Screen::new(&env);
    screen.run("stty -g > before.stty; echo REA\"\"DY", "READY");
    screen.line(&format!(
        "{BIN} run -- sh -c 'test -t 1 && echo TT\"\"Y || echo PI\"\"PED; \
         stty -echo -icanon intr ^A <&2 2>/dev/null && echo CHAN\"\"GED; \
         read x <&2 2>/dev/null && echo GOT\"\"KEY; echo FINI\"\"SHED' </dev/null; echo stat\"\"us=$?"
    ));
    assert!(screen.wait_for("status=0"), "{}", screen.screen());
    screen.run("stty -g > after.stty; echo SAV\"\"ED", "SAVED");
    let text = screen.screen();
    assert!(
        text.contains("PIPED") && text.contains("FINISHED"),
        "{text}"
    );
    assert!(
        !text.contains("CHANGED") && !text.contains("GOTKEY"),
        "{text}"
    );
    assert_eq!(screen.file("before.stty"), screen.file("after.stty"));
}

#[test]
fn the_projects_setup_command_gets_no_terminal_of_the_users_to_control() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(
        repo.join(".isolate.toml"),
        "setup = \"test -t 2 && echo TT''Y >&2 || echo PI''PED >&2; \
         stty -echo -icanon intr ^A <&2 2>/dev/null && echo CHAN''GED >&2; \
         read x <&2 2>/dev/null && echo GOT''KEY >&2; echo SET''UP >&2\"\n",
    )
    .unwrap();
    env.git(&repo, ["add", "."]);
    env.git(&repo, ["commit", "-q", "-m", "config"]);
    let screen = Screen::new(&env);
    screen.run("stty -g > before.stty; echo REA\"\"DY", "READY");
    // Headless, then interactive (the job on a pty of its own, the setup before it).
    for (round, stdin) in ["</dev/null", ""].into_iter().enumerate() {
        screen.line(&format!(
            "(cd {} && {BIN} run --worktree -- true {stdin}); echo stat\"\"us{round}=$?",
            repo.display()
        ));
        assert!(
            screen.wait_for(&format!("status{round}=0")),
            "{}",
            screen.screen()
        );
        screen.run(
            &format!("stty -g > after.stty; echo SAV\"\"ED{round}"),
            &format!("SAVED{round}"),
        );
        assert_eq!(
            screen.file("before.stty"),
            screen.file("after.stty"),
            "{stdin}"
        );
    }
    let text = screen.screen();
    assert_eq!(text.matches("PIPED").count(), 2, "{text}");
    assert_eq!(text.matches("SETUP").count(), 2, "{text}");
    assert!(
        !text.contains("TTY") && !text.contains("CHANGED") && !text.contains("GOTKEY"),
        "{text}"
    );
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

/// A Python program, run as a job, that makes a pty and uses it as programs do.
const USE_A_PTY: &str = r#"
import os, pty, struct, fcntl, termios, subprocess
m, s = os.openpty()
attrs = termios.tcgetattr(s)
attrs[3] &= ~termios.ECHO
termios.tcsetattr(s, termios.TCSANOW, attrs)
fcntl.ioctl(m, termios.TIOCSWINSZ, struct.pack("HHHH", 31, 97, 0, 0))
print("size", struct.unpack("HHHH", fcntl.ioctl(s, termios.TIOCGWINSZ, b"\0" * 8))[:2])
os.write(m, b"typed\n")
print("read", os.read(s, 100))
pid, fd = pty.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", "tty >/dev/null && echo child-on-a-tty; stty size; read x"])
# The child waits to be told to end once its lines are read: what a pty holds when its last
# slave closes can be lost to the master's EIO.
out = b""
told = False
while True:
    try:
        chunk = os.read(fd, 1000)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if not told and out.replace(b"\r", b"").count(b"\n") >= 2:
        os.write(fd, b"\n")
        told = out
os.waitpid(pid, 0)
print("forked", (told or out).replace(b"\r", b""))
r = subprocess.run(["script", "-qec", "tty >/dev/null && echo script-on-a-tty", "/dev/null"],
                   capture_output=True, text=True)
print("script", r.returncode, r.stdout.strip())
try:
    termios.tcgetattr(os.open("/dev/null", os.O_RDONLY))
except termios.error as e:
    print("null", e.args[0])
"#;

#[test]
fn a_job_makes_ptys_of_its_own_under_every_profile() {
    let env = TestEnv::new();
    let program = env.file("use_a_pty.py", USE_A_PTY);
    for profile in ["default", "strict", "offline", "claude-code", "codex"] {
        let out = env.isolate(
            env.path(),
            [
                "run",
                "-q",
                "--policy",
                profile,
                "--",
                "python3",
                program.to_str().unwrap(),
            ],
        );
        let text = stdout(&out);
        assert_status(&out, 0);
        for want in [
            "size (31, 97)",
            "read b'typed\\n'",
            "forked b'child-on-a-tty\\n0 0\\n'",
            "script 0 script-on-a-tty",
            &format!("null {}", libc::ENOTTY),
        ] {
            assert!(
                text.contains(want),
                "{profile}: no {want:?} in {text}{}",
                stderr(&out)
            );
        }
    }
}

#[test]
fn tmux_runs_inside_a_job_with_a_server_of_its_own() {
    let env = TestEnv::new();
    // The user's own tmux server runs beside it, untouched.
    let screen = Screen::new(&env);
    screen.run("echo OUT\"\"SIDE", "OUTSIDE");
    let script =
        "tmux -S \"$TMPDIR/own\" new-session -d -x 80 -y 20 'echo inside-the-job; sleep 30' && \
                  sleep 1 && tmux -S \"$TMPDIR/own\" capture-pane -p | grep inside-the-job && \
                  tmux -S \"$TMPDIR/own\" kill-server && echo served";
    let out = env.isolate(env.path(), ["run", "-q", "--", "sh", "-c", script]);
    assert_status(&out, 0);
    assert!(stdout(&out).contains("inside-the-job") && stdout(&out).contains("served"));
    screen.run("echo STILL\"\"HERE", "STILLHERE");
}

/// Long work shows progress on a terminal, and only there: creating a worktree shows git's
/// progress line on stderr when it is a terminal (git's delay set to none, so a small repository
/// shows it), the import of a thousand objects or more index-pack's count; nothing when stderr is
/// a pipe; `merge` of several jobs says which one of how many it is at.
#[test]
fn long_work_shows_progress_on_a_terminal_and_nowhere_else() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for i in 0..300 {
        fs::write(repo.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
    }
    env.git(&repo, ["add", "."]);
    env.git(&repo, ["commit", "-q", "-m", "files"]);
    let screen = Screen::new(&env);
    screen.line(&format!(
        "cd {} && GIT_PROGRESS_DELAY=0 {BIN} run --worktree -- true",
        repo.display()
    ));
    assert!(screen.wait_for("Updating files"), "{}", screen.screen());
    assert!(
        !screen.screen().contains("Reset branch"),
        "{}",
        screen.screen()
    );

    let piped = env.isolate_with(
        &repo,
        &[("GIT_PROGRESS_DELAY", "0")],
        &["run", "--worktree", "--", "true"],
    );
    assert_status(&piped, 0);
    assert!(
        !stderr(&piped).contains("Updating files"),
        "{}",
        stderr(&piped)
    );

    for n in 0..2 {
        let (out, _) = env.worktree_job(
            &repo,
            &[],
            &format!("echo {n} > job{n}.txt && git add job{n}.txt && git commit -q -m job{n}"),
        );
        assert_status(&out, 0);
    }
    // The screen's shell has no global git configuration: the identity is the project's own.
    env.git(&repo, ["config", "user.name", "Test User"]);
    env.git(&repo, ["config", "user.email", "test@example.com"]);
    screen.line(&format!("{BIN} merge --all --yes"));
    assert!(screen.wait_for("[2/2]"), "{}", screen.screen());
    assert!(screen.screen().contains("[1/2]"), "{}", screen.screen());
}
