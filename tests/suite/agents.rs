//! The real agent CLIs under isolate, with no flag beyond `--worktree`: Claude Code from npm, aider
//! from PyPI (`.ci/run` installs them; a test fails, never skips, when one is missing).
//! No model API is reachable, so each is driven up to its first API call: its TUI comes up in a
//! real terminal, a headless run reaches the agent's own network error, with nothing refused on
//! the state it keeps, and the job ends with its worktree removed and nothing of it left running.
//! The agents at work, against a scripted model, are agents_at_work.rs.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::support::screen::Screen;
use crate::support::*;

/// `name` on PATH, every symlink followed; a missing agent fails the test, saying how CI gets it.
pub(super) fn agent(name: &str, package: &str) -> PathBuf {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.is_file())
        .and_then(|p| fs::canonicalize(p).ok())
        .unwrap_or_else(|| {
            panic!(
                "{name} is not on PATH: the agent tests drive the real {package}, which .ci/run \
                 installs from its registry (was the registry reachable?)"
            )
        })
}

/// A project an agent may work in: its own files ignored (aider's `.aider*` chat history), so
/// that a job that changed nothing ends clean.
fn project(env: &TestEnv) -> PathBuf {
    let repo = env.repo("app");
    fs::write(repo.join(".gitignore"), "target/\n.aider*\n").unwrap();
    env.git(&repo, ["commit", "-q", "-am", "ignore aider's files"]);
    repo
}

/// Processes of `agent` still running with the test's home directory: what a job left behind.
pub(super) fn left_running(env: &TestEnv, agent: &str) -> Vec<String> {
    let needle = format!("HOME={}", env.home.display());
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(environ) = fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ.split(|&b| b == 0).any(|v| v == needle.as_bytes()) {
            let cmdline = fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(agent) {
                found.push(cmdline);
            }
        }
    }
    found
}

/// `isolate run --worktree --timeout LIMIT -- CMD` with the agent's variables: a headless run
/// bounded (the agents retry the network for minutes).
fn headless(
    env: &TestEnv,
    repo: &Path,
    vars: &[(&str, &str)],
    limit: &str,
    cmd: &[&str],
) -> Output {
    let mut args = vec!["run", "--worktree", "--timeout", limit, "--"];
    args.extend_from_slice(cmd);
    env.isolate_with(repo, vars, &args)
}

/// What an agent's own logs and output say when the sandbox refused it something.
pub(super) fn refusals(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            let lower = l.to_lowercase();
            let word = |w: &str| {
                lower
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .any(|t| t == w)
            };
            word("eacces")
                || word("eperm")
                || word("erofs")
                || word("permissionerror")
                || lower.contains("permission denied")
                || lower.contains("os error 13")
                || lower.contains("read-only file system")
        })
        .collect()
}

fn files_under(dir: &Path) -> String {
    let mut text = String::new();
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        text.push_str(&fs::read_to_string(entry.path()).unwrap_or_default());
    }
    text
}

/// The end of a job of `agent` in the outer shell, and everything of it gone.
fn ended_clean(screen: &Screen, env: &TestEnv, agent: &str) {
    assert!(
        wait_until(Duration::from_secs(30), || screen
            .screen()
            .contains("worktree: removed")),
        "the job did not end with its worktree removed:\n{}",
        screen.screen()
    );
    assert!(env.worktree_dirs().is_empty());
    assert!(
        wait_until(Duration::from_secs(10), || left_running(env, agent)
            .is_empty()),
        "left running: {:?}",
        left_running(env, agent)
    );
}

/// A headless run of `agent` that got as far as one of `errors` (its own words for the network
/// being down), with nothing refused, its worktree removed and nothing of it left running.
fn reached_its_network_error(env: &TestEnv, out: &Output, agent: &str, errors: &[&str]) {
    let said = format!("{}{}", stdout(out), stderr(out));
    assert!(errors.iter().any(|e| said.contains(e)), "{said}");
    assert!(refusals(&said).is_empty(), "{:?}", refusals(&said));
    assert!(said.contains("worktree: removed"), "{said}");
    assert!(
        wait_until(Duration::from_secs(10), || left_running(env, agent)
            .is_empty()),
        "{:?}",
        left_running(env, agent)
    );
}

const CLAUDE: [(&str, &str); 4] = [
    ("ANTHROPIC_API_KEY", "sk-ant-api03-isolate-test"),
    ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
    ("CLAUDE_CODE_MAX_RETRIES", "0"),
    ("DISABLE_AUTOUPDATER", "1"),
];

#[test]
fn claude_code_comes_up_in_a_terminal_and_keeps_its_configuration_atomically() {
    agent("claude", "@anthropic-ai/claude-code");
    let env = TestEnv::new();
    let repo = project(&env);
    // The user's configuration, carried over into the job's at the first run.
    fs::write(
        env.home.join(".claude.json"),
        "{\"numStartups\": 7, \"theme\": \"dark\"}\n",
    )
    .unwrap();
    let screen = Screen::new(&env);
    let vars: Vec<String> = CLAUDE.iter().map(|(k, v)| format!("{k}={v}")).collect();
    screen.line(&format!(
        "cd {} && {} {BIN} run --worktree -- claude",
        repo.display(),
        vars.join(" ")
    ));
    assert!(
        screen.wait_for("Welcome to Claude Code"),
        "{}",
        screen.screen()
    );
    let shown = screen.screen();
    assert!(
        shown.contains("policy claude-code (the command is Claude Code: "),
        "{shown}"
    );
    assert!(
        shown.contains("carried ~/.claude.json over to ~/.claude/.claude.json"),
        "{shown}"
    );
    // It stops at its connection check, or at a screen that waits: end it as a user would.
    if !wait_until(Duration::from_secs(15), || {
        screen.screen().contains("isolate: job") && screen.screen().contains("worktree:")
    }) {
        screen.key("C-c");
        screen.key("C-c");
    }
    ended_clean(&screen, &env, "claude");
    let config = fs::read_to_string(env.home.join(".claude/.claude.json")).unwrap();
    assert!(config.contains("\"numStartups\""), "{config}");
    assert!(config.contains("\"firstStartTime\""), "{config}");
    assert_eq!(
        fs::read_to_string(env.home.join(".claude.json")).unwrap(),
        "{\"numStartups\": 7, \"theme\": \"dark\"}\n",
        "the user's own configuration is never written by a job"
    );

    // Headless, the configuration is replaced whole (a new file renamed over it, under its lock),
    // never written in place: a link to the old file keeps the old content.
    let kept = env.home.join(".claude/.claude.json");
    fs::write(&kept, "{\"numStartups\": 3}\n").unwrap();
    let link = env.path().join("old-config");
    fs::hard_link(&kept, &link).unwrap();
    let out = headless(
        &env,
        &repo,
        &CLAUDE,
        "60s",
        &["claude", "--debug", "-p", "say hi"],
    );
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains("Unable to connect to API") || said.contains("API Error"),
        "{said}"
    );
    assert!(said.contains("worktree: removed"), "{said}");
    let now = fs::read_to_string(&kept).unwrap();
    assert!(now.contains("\"firstStartTime\""), "{now}");
    assert_eq!(fs::read_to_string(&link).unwrap(), "{\"numStartups\": 3}\n");
    assert_ne!(
        fs::metadata(&kept).unwrap().ino(),
        fs::metadata(&link).unwrap().ino()
    );
    let leftovers: Vec<String> = fs::read_dir(env.home.join(".claude"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".claude.json."))
        .collect();
    assert!(
        leftovers.is_empty(),
        "lock or temporary file left: {leftovers:?}"
    );
    let debug = files_under(&env.home.join(".claude/debug"));
    assert!(!debug.is_empty(), "claude --debug wrote no log");
    assert!(refusals(&debug).is_empty(), "{:?}", refusals(&debug));
    // Nothing of the home directory but its state directory.
    let home: Vec<String> = fs::read_dir(&env.home)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let mut home = home;
    home.sort();
    assert_eq!(home, [".claude", ".claude.json"]);
    assert!(left_running(&env, "claude").is_empty());
}

#[test]
fn aider_comes_up_runs_commands_in_a_pty_and_reaches_its_network_error() {
    agent("aider", "aider-chat");
    let env = TestEnv::new();
    let repo = project(&env);
    let screen = Screen::new(&env);
    screen.line(&format!(
        "cd {} && ANTHROPIC_API_KEY=sk-ant-api03-isolate-test {BIN} run --worktree -- aider --no-check-update --no-show-model-warnings --no-analytics",
        repo.display()
    ));
    assert!(
        wait_until(Duration::from_secs(90), || screen
            .screen()
            .contains("Aider v")),
        "{}",
        screen.screen()
    );
    assert!(
        screen
            .screen()
            .contains("policy aider (the command is aider: "),
        "{}",
        screen.screen()
    );
    // Past the first-run question, to its prompt; `/run` takes a pty.
    if wait_until(Duration::from_secs(10), || {
        screen.screen().contains("what's new")
    }) {
        screen.line("n");
    }
    // Typed before aider has drawn its prompt, the line is taken while prompt_toolkit redraws, and
    // the command's output can be drawn over (seen under load): wait for the empty prompt first.
    wait_until(Duration::from_secs(30), || {
        screen.screen().lines().any(|l| l.trim_end() == ">")
    });
    // aider's `/run` reads the command's pty with pexpect, which now and then loses the output of a
    // command that exits at once (the question then counts no output): asked again, up to 3 times.
    for _ in 0..3 {
        let asked = screen
            .screen()
            .matches("command output to the chat")
            .count();
        screen.line("/run echo pty-$((6*7))");
        wait_until(Duration::from_secs(30), || {
            let now = screen.screen();
            now.contains("pty-42") || now.matches("command output to the chat").count() > asked
        });
        if screen.screen().contains("pty-42") {
            break;
        }
        screen.line("n");
        wait_until(Duration::from_secs(10), || {
            screen.screen().lines().any(|l| l.trim_end() == ">")
        });
    }
    assert!(
        wait_until(Duration::from_secs(30), || screen
            .screen()
            .contains("pty-42")),
        "{}",
        screen.screen()
    );
    screen.line("n");
    screen.line("/exit");
    ended_clean(&screen, &env, "aider");
    assert!(!screen.screen().contains("PermissionError"));

    let vars = [("ANTHROPIC_API_KEY", "sk-ant-api03-isolate-test")];
    let out = headless(
        &env,
        &repo,
        &vars,
        "30s",
        &[
            "aider",
            "--no-analytics",
            "--no-check-update",
            "--no-show-model-warnings",
            "--yes-always",
            "--verbose",
            "--message",
            "say hi",
        ],
    );
    reached_its_network_error(&env, &out, "aider", &["litellm.", "AnthropicException"]);
    assert!(env.home.join(".aider").is_dir());
}

/// A real copy of Claude Code, installed per user as its native installer lays it out.
fn per_user_claude(env: &TestEnv) -> PathBuf {
    let real = agent("claude", "@anthropic-ai/claude-code");
    let versions = env.home.join(".local/share/claude/versions");
    fs::create_dir_all(&versions).unwrap();
    let copy = versions.join("2.1.0");
    fs::copy(&real, &copy).unwrap();
    let bin = env.home.join(".local/bin");
    fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&copy, bin.join("claude")).unwrap();
    bin
}

#[test]
fn strict_runs_an_agent_installed_per_user_and_still_reads_nothing_else_of_home() {
    let env = TestEnv::new();
    let repo = project(&env);
    let bin = per_user_claude(&env);
    fs::write(env.home.join("secret"), "s3cret\n").unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let vars = [("PATH", path.as_str())];
    let out = env.isolate_with(
        &repo,
        &vars,
        &[
            "run",
            "--worktree",
            "--policy",
            "strict",
            "--",
            "claude",
            "--version",
        ],
    );
    assert_status(&out, 0);
    assert!(stdout(&out).contains("(Claude Code)"), "{}", stderr(&out));
    // The installation is readable, and nothing beside it.
    let script = "cat ~/secret; ls ~/.local/share/claude/versions >/dev/null && echo listed";
    let out = env.isolate_with(
        &repo,
        &vars,
        &[
            "run",
            "--worktree",
            "--policy",
            "strict",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    assert!(!stdout(&out).contains("s3cret"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("listed"), "{}", stdout(&out));

    // Without the installation, the 126 names the file the job could not execute.
    let file = env.file(
        "no-installation.toml",
        "extends = \"strict\"\n[filesystem]\ninstallation = false\n",
    );
    let out = env.isolate_with(
        &repo,
        &vars,
        &[
            "run",
            "--worktree",
            "--policy",
            file.to_str().unwrap(),
            "--",
            "claude",
            "--version",
        ],
    );
    assert_status(&out, 126);
    let copy = env.home.join(".local/share/claude/versions/2.1.0");
    assert!(
        stderr(&out).contains(&format!(
            "the job may not read or execute {}",
            copy.display()
        )),
        "{}",
        stderr(&out)
    );
    assert!(env.worktree_dirs().is_empty());

    // A project's pyvenv.cfg names no installation: `home = ../x` would have opened the home.
    let tools = repo.join("tools/bin");
    fs::create_dir_all(&tools).unwrap();
    fs::write(repo.join("tools/pyvenv.cfg"), "home = ../x\n").unwrap();
    fs::write(
        tools.join("lint"),
        "#!/bin/sh\ncat \"$HOME/secret\" && echo read-it\n",
    )
    .unwrap();
    fs::set_permissions(
        tools.join("lint"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    env.git(&repo, ["add", "tools"]);
    env.git(&repo, ["commit", "-q", "-m", "a venv of the project's"]);
    let out = env.isolate_with(
        &repo,
        &vars,
        &[
            "run",
            "--worktree",
            "--policy",
            "strict",
            "--",
            "tools/bin/lint",
        ],
    );
    assert!(!stdout(&out).contains("read-it"), "{}", stdout(&out));

    // An installation that would be the home directory (an npm prefix of ~) is the file alone.
    let package = env.home.join("lib/node_modules/tool");
    fs::create_dir_all(&package).unwrap();
    let cli = package.join("cli.sh");
    fs::write(&cli, "#!/bin/sh\ncat \"$HOME/secret\" && echo read-it\n").unwrap();
    fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(&cli, bin.join("tool")).unwrap();
    let out = env.isolate_with(
        &repo,
        &vars,
        &["run", "--worktree", "--policy", "strict", "--", "tool"],
    );
    assert!(!stdout(&out).contains("read-it"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("Permission denied"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_profile_follows_the_real_executable_and_policy_always_wins() {
    agent("claude", "@anthropic-ai/claude-code");
    let env = TestEnv::new();
    let repo = project(&env);
    let out = env.isolate_with(&repo, &CLAUDE, &["run", "--", "claude", "--version"]);
    assert_status(&out, 0);
    assert!(
        stderr(&out).contains("policy claude-code (the command is Claude Code: "),
        "{}",
        stderr(&out)
    );
    // A script named like the agent, or the agent behind a shell, is no agent.
    let fake = env.path().join("bin");
    fs::create_dir_all(&fake).unwrap();
    fs::write(fake.join("claude"), "#!/bin/sh\necho fake\n").unwrap();
    fs::set_permissions(
        fake.join("claude"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap());
    let out = env.isolate_with(&repo, &[("PATH", &path)], &["run", "--", "claude"]);
    assert_status(&out, 0);
    assert!(stderr(&out).contains("policy default"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("claude-code"), "{}", stderr(&out));
    let out = env.isolate(&repo, ["run", "--", "sh", "-c", "claude --version"]);
    assert!(stderr(&out).contains("policy default"), "{}", stderr(&out));
    // The real agent, but the project's own copy: the project's code, no agent's profile.
    let local = repo.join("node_modules/@anthropic-ai/claude-code/bin");
    fs::create_dir_all(&local).unwrap();
    fs::copy(
        agent("claude", "@anthropic-ai/claude-code"),
        local.join("claude.exe"),
    )
    .unwrap();
    let out = env.isolate_with(
        &repo,
        &CLAUDE,
        &[
            "run",
            "--",
            "./node_modules/@anthropic-ai/claude-code/bin/claude.exe",
            "--version",
        ],
    );
    assert_status(&out, 0);
    assert!(stderr(&out).contains("policy default"), "{}", stderr(&out));

    // An empty PATH entry is the current directory, as exec has it: the project's own `claude`
    // found there first is no agent.
    let repo_bin = repo.join("claude");
    fs::write(&repo_bin, "#!/bin/sh\necho project-claude\n").unwrap();
    fs::set_permissions(
        &repo_bin,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(":{}", std::env::var("PATH").unwrap());
    let out = env.isolate_with(&repo, &[("PATH", &path)], &["run", "--", "claude"]);
    assert_eq!(stdout(&out), "project-claude\n", "{}", stderr(&out));
    assert!(stderr(&out).contains("policy default"), "{}", stderr(&out));
    fs::remove_file(&repo_bin).unwrap();

    // --policy wins, and the end says what the agent's state lacked, with the profile to use.
    let out = env.isolate_with(
        &repo,
        &CLAUDE,
        &["run", "--policy", "default", "--", "claude", "--version"],
    );
    assert_status(&out, 0);
    let said = stderr(&out);
    assert!(said.contains("landlock ABI"), "{said}");
    assert!(!said.contains("(the command is"), "{said}");
    assert!(
        said.contains("hint: Claude Code keeps its state in ~/.claude")
            && said.contains("--policy claude-code"),
        "{said}"
    );
}
