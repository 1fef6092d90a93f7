//! A real terminal for tests: a tmux server of its own running an interactive shell in the test's
//! hermetic environment, typed into with send-keys and read with capture-pane.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{wait_until, TestEnv};

/// A tmux server of its own running an interactive shell, in the test's hermetic environment.
pub struct Screen {
    socket: String,
    dir: PathBuf,
}

impl Screen {
    pub fn new(env: &TestEnv) -> Screen {
        Screen::new_named(env, "main")
    }

    /// Another terminal of the same test (its own tmux server, named `name`).
    pub fn new_named(env: &TestEnv, name: &str) -> Screen {
        let socket = format!(
            "isolate-test-{}-{}-{name}",
            std::process::id(),
            env.path().file_name().unwrap().to_string_lossy()
        );
        let dir = env.path().to_path_buf();
        let screen = Screen { socket, dir };
        let shell = format!(
            "env -i PATH={} HOME={} ISOLATE_HOME={} TERM=xterm PS1='outer$ ' bash --norc --noprofile -i",
            std::env::var("PATH").unwrap(),
            env.home.display(),
            env.state.display()
        );
        screen.tmux(&[
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            "120",
            "-y",
            "30",
            "-c",
            &env.path().display().to_string(),
            &shell,
        ]);
        assert!(screen.wait_for("outer$"), "the shell did not start");
        screen
    }

    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("tmux is installed (.ci/run installs it)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn send(&self, keys: &str) {
        self.tmux(&["send-keys", "-t", "main", "-l", keys]);
    }

    pub fn key(&self, key: &str) {
        self.tmux(&["send-keys", "-t", "main", key]);
    }

    pub fn line(&self, text: &str) {
        self.send(text);
        self.key("Enter");
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-t", "main", "-p", "-J", "-S", "-200"])
    }

    pub fn wait_for(&self, needle: &str) -> bool {
        wait_until(Duration::from_secs(20), || self.screen().contains(needle))
    }

    /// Runs `command` in the outer shell and waits for `marker` to be printed.
    pub fn run(&self, command: &str, marker: &str) {
        self.line(command);
        assert!(
            self.wait_for(marker),
            "never saw {marker:?}:\n{}",
            self.screen()
        );
    }

    pub fn file(&self, name: &str) -> String {
        fs::read_to_string(self.dir.join(name)).unwrap_or_default()
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}
