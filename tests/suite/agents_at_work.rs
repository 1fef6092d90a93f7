//! The real agent CLIs at work under isolate: Claude Code, Codex, aider, opencode and Gemini CLI,
//! each as `scripts/test.sh` installs it, run with `--worktree` under its own profile against a
//! scripted model on loopback (tests/data/model-server.py) that has it write a file with its own
//! tool, run a command that needs a terminal and a loopback server of its own (tools/check.py),
//! and commit. Each run must bring the commit home on `isolate/<id>`, remove the worktree, leave
//! nothing running and the project's repository clean (`git fsck`), and refuse the agent nothing
//! on the files it keeps. Headless for each agent, in a terminal (tmux) for Claude Code and Codex,
//! and under `strict` combined with the agent's profile, where the rest of the home directory stays
//! unreadable while the agent works. The agents are pointed at the model the way README's section
//! on each says (its configuration blocks are taken from README), and a model each answers at once,
//! so each run takes seconds.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use super::agents::{agent, left_running, refusals};
use crate::support::model::{Model, Step};
use crate::support::screen::Screen;
use crate::support::*;

/// Needs a terminal and a server of its own: a child on a new pty reports its terminal, and an
/// HTTP server on loopback answers a request made straight to it.
const CHECK: &str = r#"import http.client, http.server, os, pty, threading

pid, fd = pty.fork()
if pid == 0:
    os.write(1, ("tty=" + os.ttyname(0) + "\n").encode())
    os._exit(0)
seen = b""
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
os.waitpid(pid, 0)
print("pty: " + ("ok" if b"tty=/dev/pts/" in seen else "no: %r" % seen))

class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"served")

    def log_message(self, *args):
        pass

server = http.server.HTTPServer(("127.0.0.1", 0), Hello)
threading.Thread(target=server.serve_forever, daemon=True).start()
conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
conn.request("GET", "/")
print("server: " + conn.getresponse().read().decode())
"#;

/// What tools/check.py prints when it had its terminal and its server.
const PROOF: &str = "pty: ok\nserver: served\n";

/// What the agent is told; the scripted model's plan says the rest.
const TASK: &str = "Do the scripted task.";

/// A secret of the user's that `strict` keeps from the job.
const SECRET: &str = "s3cret-of-the-user";

/// How long a headless agent run may take, in isolate's words (below the test's own bound).
const RUN_LIMIT: &str = "100s";

/// The project an agent works in: tools/check.py, and the commands an aider job loads (aider runs
/// the model's shell commands only when asked in person: its check and commit are aider's own
/// `/run`, the plan's steps).
fn project(env: &TestEnv) -> PathBuf {
    let repo = env.repo("app");
    fs::create_dir_all(repo.join("tools")).unwrap();
    fs::write(repo.join("tools/check.py"), CHECK).unwrap();
    for (name, strict) in [("aider-commands", false), ("aider-commands-strict", true)] {
        let (_, check, commit) = plan("aider", strict);
        fs::write(
            repo.join("tools").join(name),
            format!("/run {check}\n/run {commit}\n"),
        )
        .unwrap();
    }
    env.git(&repo, ["add", "tools"]);
    env.git(&repo, ["commit", "-q", "-m", "the agents' tools"]);
    // A terminal's shell has no global git configuration: the identity is the project's own too.
    env.git(&repo, ["config", "user.name", "Test User"]);
    env.git(&repo, ["config", "user.email", "test@example.com"]);
    repo
}

/// The system's Python, which every profile reads (a per-user one on the test's PATH, pyenv's
/// shims in the user's home, is not the test's home's to read under strict).
fn python() -> &'static str {
    match Path::new("/usr/bin/python3").exists() {
        true => "/usr/bin/python3",
        false => "python3",
    }
}

/// The model's plan for `who`: write hello.txt, run the check (under strict, try the user's secret
/// too), commit both.
fn plan(who: &str, strict: bool) -> (String, String, String) {
    let hello = format!("hello from {who}\n");
    let mut check = format!("{} tools/check.py > proof.txt", python());
    if strict {
        check.push_str("; (cat \"$HOME/secret\" || echo refused) > secret.txt 2>&1");
    }
    let commit = format!("git add -A && git commit -q -m '{who}: hello and proof'");
    (hello, check, commit)
}

fn model(env: &TestEnv, who: &str, strict: bool) -> Model {
    let (hello, check, commit) = plan(who, strict);
    Model::start(
        env.path(),
        &[
            Step::Write("hello.txt", &hello),
            Step::Run(&check),
            Step::Run(&commit),
        ],
    )
}

/// A profile of the user's: strict, with the agent's own (what README tells to write).
fn strict_with(env: &TestEnv, profile: &str) -> String {
    fs::write(env.home.join("secret"), format!("{SECRET}\n")).unwrap();
    env.file(
        &format!("strict-{profile}.toml"),
        &format!("extends = [\"strict\", \"{profile}\"]\n"),
    )
    .display()
    .to_string()
}

/// The section of README on `agent` (from its `### ` heading to the next heading).
fn readme_section(agent: &str) -> String {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let heading = format!("\n### {agent}\n");
    let start = readme
        .find(&heading)
        .unwrap_or_else(|| panic!("README has no section {heading:?}"));
    let rest = &readme[start + heading.len()..];
    let end = rest.find("\n#").unwrap_or(rest.len());
    rest[..end].to_string()
}

/// The first ```LANG block of README's section on `agent`, its gateway made the model's.
fn readme_block(agent: &str, lang: &str, model: &Model) -> String {
    let section = readme_section(agent);
    let fence = format!("```{lang}\n");
    let start = section
        .find(&fence)
        .unwrap_or_else(|| panic!("README's {agent} has no {lang} block"));
    let rest = &section[start + fence.len()..];
    let block = &rest[..rest.find("```").unwrap()];
    block.replace("127.0.0.1:4000", &model.destination())
}

/// The id a start line names (`isolate: job <id> in …`).
fn job_id(text: &str) -> String {
    let at = text
        .find("isolate: job ")
        .unwrap_or_else(|| panic!("no start line:\n{text}"));
    text[at + "isolate: job ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// The job's commit came home on `isolate/<id>` with the file the agent wrote and the check's
/// output, the worktree was removed, nothing of the job runs any more, nothing was refused the
/// agent on its files, and the project's repository is clean.
fn came_home(env: &TestEnv, repo: &Path, said: &str, who: &str, name: &str) {
    let id = job_id(said);
    assert!(said.contains("worktree: removed"), "{said}");
    let branch = format!("isolate/{id}");
    let show = |file: &str| env.git(repo, ["show", &format!("{branch}:{file}")]) + "\n";
    assert_eq!(show("hello.txt"), format!("hello from {who}\n"), "{said}");
    assert_eq!(show("proof.txt"), PROOF, "{said}");
    let author = env.git(repo, ["log", "-1", "--format=%an <%ae>", &branch]);
    assert_eq!(author, "Test User <test@example.com>");
    assert!(env.worktree_dirs().is_empty(), "{said}");
    for running in [name, "check.py"] {
        assert!(
            wait_until(Duration::from_secs(10), || left_running(env, running)
                .is_empty()),
            "left running: {:?}",
            left_running(env, running)
        );
    }
    assert!(refusals(said).is_empty(), "{:?}", refusals(said));
    no_unknown_setting(said);
    env.assert_fsck(repo);
}

/// Under strict, the agent read nothing of the home directory beyond its own state.
fn kept_the_secret(env: &TestEnv, repo: &Path, said: &str) {
    let branch = format!("isolate/{}", job_id(said));
    let tried = env.git(repo, ["show", &format!("{branch}:secret.txt")]);
    assert!(!tried.contains(SECRET), "{tried}");
    assert!(tried.contains("refused"), "{tried}");
}

/// No setting of the profile's is one the agent does not know.
fn no_unknown_setting(said: &str) {
    let lower = said.to_lowercase();
    for word in [
        "unrecognized",
        "unknown config",
        "unknown option",
        "is ignored",
    ] {
        assert!(!lower.contains(word), "the agent said {word:?}:\n{said}");
    }
}

/// `isolate run --worktree [--policy POLICY] --allow-net MODEL -- CMD` in `repo`, headless.
fn headless(
    env: &TestEnv,
    repo: &Path,
    model: &Model,
    policy: Option<&str>,
    vars: &[(&str, &str)],
    cmd: &[&str],
) -> (Output, String) {
    let destination = model.destination();
    let mut args = vec!["run", "--worktree", "--timeout", RUN_LIMIT];
    if let Some(policy) = policy {
        args.extend(["--policy", policy]);
    }
    args.extend(["--allow-net", &destination, "--"]);
    args.extend_from_slice(cmd);
    let out = env.isolate_with(repo, vars, &args);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    (out, format!("{said}\nthe model saw:\n{}", model.log()))
}

/// README has a section on each agent: how to run it, what its profile grants, a gateway, trust,
/// and what stays refused (the tests below take its configuration blocks and variables from it).
#[test]
fn readme_has_a_section_on_each_agent() {
    for (agent, profile) in [
        ("Claude Code", "claude-code"),
        ("Codex", "codex"),
        ("aider", "aider"),
        ("opencode", "opencode"),
        ("Gemini CLI", "gemini"),
    ] {
        let section = readme_section(agent);
        for said in [
            "isolate run --worktree -- ".to_string(),
            format!("The `{profile}`\nprofile"),
            "--allow-net 127.0.0.1:4000".to_string(),
            "Refused:".to_string(),
        ] {
            let flat = section.replace('\n', " ");
            assert!(
                flat.contains(&said.replace('\n', " ")),
                "README's {agent} says nothing of {said:?}:\n{section}"
            );
        }
    }
}

// ------------------------------------------------------------------------------- Claude Code

/// Claude Code's configuration as after its onboarding, with `key` approved and, when `trusted`,
/// the project trusted.
fn claude_config(env: &TestEnv, repo: &Path, key: &str, trusted: bool) {
    let approved = &key[key.len() - 20..];
    let mut config = serde_json::json!({
        "hasCompletedOnboarding": true,
        "customApiKeyResponses": { "approved": [approved], "rejected": [] },
    });
    if trusted {
        config["projects"] = serde_json::json!({
            repo.to_str().unwrap(): { "hasTrustDialogAccepted": true }
        });
    }
    fs::write(env.home.join(".claude.json"), config.to_string()).unwrap();
}

const CLAUDE_KEY: &str = "sk-ant-api03-isolate-scripted-model";

fn claude_vars(model: &Model) -> Vec<(&'static str, String)> {
    let section = readme_section("Claude Code");
    assert!(
        section.contains("ANTHROPIC_BASE_URL=http://127.0.0.1:4000"),
        "{section}"
    );
    vec![
        ("ANTHROPIC_BASE_URL", model.url()),
        ("ANTHROPIC_API_KEY", CLAUDE_KEY.to_string()),
        ("DISABLE_AUTOUPDATER", "1".to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
    ]
}

fn claude_headless(strict: bool) {
    agent("claude", "@anthropic-ai/claude-code");
    let env = TestEnv::new();
    let repo = project(&env);
    let model = model(&env, "claude", strict);
    let policy = strict.then(|| strict_with(&env, "claude-code"));
    let vars = claude_vars(&model);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // As root, Claude Code takes --dangerously-skip-permissions only in a sandbox: the profile says
    // it is one.
    let cmd = ["claude", "-p", TASK, "--dangerously-skip-permissions"];
    let (out, said) = headless(&env, &repo, &model, policy.as_deref(), &vars, &cmd);
    assert_status(&out, 0);
    came_home(&env, &repo, &said, "claude", "claude");
    if strict {
        kept_the_secret(&env, &repo, &said);
    }
}

#[test]
fn claude_code_works_headless_and_its_commit_comes_home() {
    claude_headless(false);
}

#[test]
fn claude_code_works_under_strict_with_its_profile() {
    claude_headless(true);
}

/// In a terminal: no trust dialog where the project is trusted (it asks where it is not), the
/// agent works, and the job ends with the commit home.
#[test]
fn claude_code_works_in_a_terminal_without_asking_to_trust_its_worktree() {
    agent("claude", "@anthropic-ai/claude-code");
    let env = TestEnv::new();
    let repo = project(&env);
    let model = model(&env, "claude", false);
    let vars: Vec<String> = claude_vars(&model)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let start = format!(
        "cd {} && {} {BIN} run --worktree --allow-net {} -- claude --allowedTools Bash Write",
        repo.display(),
        vars.join(" "),
        model.destination()
    );

    // Untrusted: Claude Code asks (and is left unanswered).
    claude_config(&env, &repo, CLAUDE_KEY, false);
    let screen = Screen::new(&env);
    screen.line(&start);
    assert!(
        wait_until(Duration::from_secs(60), || screen
            .screen()
            .contains("Yes, I trust this folder")),
        "{}",
        screen.screen()
    );
    screen.key("Escape");
    if !wait_until(Duration::from_secs(10), || {
        screen.screen().contains("worktree:")
    }) {
        screen.key("C-c");
    }
    assert!(
        wait_until(Duration::from_secs(30), || screen
            .screen()
            .contains("worktree: removed")),
        "{}",
        screen.screen()
    );
    drop(screen);

    // Trusted: the worktree is trusted in the job's configuration, and nothing is asked.
    claude_config(&env, &repo, CLAUDE_KEY, true);
    fs::remove_file(env.home.join(".claude/.claude.json")).unwrap();
    let screen = Screen::new_named(&env, "trusted");
    screen.line(&start);
    assert!(
        wait_until(Duration::from_secs(60), || screen
            .screen()
            .contains("? for shortcuts")),
        "{}",
        screen.screen()
    );
    let shown = screen.screen();
    assert!(!shown.contains("Yes, I trust this folder"), "{shown}");
    assert!(
        shown.contains("Claude Code trusts the worktree, as you trusted the project in"),
        "{shown}"
    );
    screen.line(TASK);
    assert!(
        wait_until(Duration::from_secs(60), || screen.screen().contains("DONE")),
        "{}\nthe model saw:\n{}",
        screen.screen(),
        model.log()
    );
    screen.line("/exit");
    assert!(
        wait_until(Duration::from_secs(30), || screen
            .screen()
            .contains("worktree: removed")),
        "{}",
        screen.screen()
    );
    let shown = screen.screen();
    came_home(&env, &repo, &shown, "claude", "claude");
    // The user's own configuration is never the job's to write; the job's trusts the worktree no
    // more once the job ended (a later session there holds what the job wrote).
    let user = fs::read_to_string(env.home.join(".claude.json")).unwrap();
    assert!(!user.contains("worktrees"), "{user}");
    let job: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(env.home.join(".claude/.claude.json")).unwrap())
            .unwrap();
    let worktree = env.state.join("worktrees");
    let trusted: Vec<&String> = job["projects"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(path, entry)| {
            path.starts_with(worktree.to_str().unwrap()) && entry["hasTrustDialogAccepted"] == true
        })
        .map(|(path, _)| path)
        .collect();
    assert!(trusted.is_empty(), "{trusted:?}\n{shown}");
    assert!(job["projects"][repo.to_str().unwrap()]["hasTrustDialogAccepted"] == true);
}

// ------------------------------------------------------------------------------------- Codex

/// Codex pointed at the model by README's provider block, the project trusted when `trusted`.
fn codex_config(env: &TestEnv, repo: &Path, model: &Model, trusted: bool) {
    let mut config = readme_block("Codex", "toml", model);
    if trusted {
        config.push_str(&format!(
            "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            repo.display()
        ));
    }
    fs::create_dir_all(env.home.join(".codex")).unwrap();
    fs::write(env.home.join(".codex/config.toml"), config).unwrap();
}

const CODEX_VARS: [(&str, &str); 1] = [("OPENAI_API_KEY", "sk-isolate-scripted-model")];

fn codex_headless(strict: bool) {
    agent("codex", "@openai/codex");
    let env = TestEnv::new();
    let repo = project(&env);
    let model = model(&env, "codex", strict);
    codex_config(&env, &repo, &model, false);
    let policy = strict.then(|| strict_with(&env, "codex"));
    let cmd = ["codex", "exec", TASK];
    let (out, said) = headless(&env, &repo, &model, policy.as_deref(), &CODEX_VARS, &cmd);
    assert_status(&out, 0);
    // Its own sandbox off, its app server its own, with switches it knows.
    assert!(said.contains("sandbox: danger-full-access"), "{said}");
    assert!(
        said.contains("codex runs with --no-daemon -c sandbox_mode=\"danger-full-access\""),
        "{said}"
    );
    no_unknown_setting(&said);
    came_home(&env, &repo, &said, "codex", "codex");
    if strict {
        kept_the_secret(&env, &repo, &said);
    }
}

#[test]
fn codex_works_headless_and_its_commit_comes_home() {
    codex_headless(false);
}

#[test]
fn codex_works_under_strict_with_its_profile() {
    codex_headless(true);
}

/// Ctrl-C until Codex has quit (the first may take it back to its agent command center).
fn quit_codex(screen: &Screen) {
    for _ in 0..5 {
        screen.key("C-c");
        if wait_until(Duration::from_secs(5), || {
            screen.screen().contains("worktree:")
        }) {
            return;
        }
    }
}

#[test]
fn codex_works_in_a_terminal_without_asking_to_trust_its_worktree() {
    agent("codex", "@openai/codex");
    let env = TestEnv::new();
    let repo = project(&env);
    let model = model(&env, "codex", false);
    let start = format!(
        "cd {} && {}={} {BIN} run --worktree --allow-net {} -- codex",
        repo.display(),
        CODEX_VARS[0].0,
        CODEX_VARS[0].1,
        model.destination()
    );

    // Untrusted: Codex asks (and is left unanswered).
    codex_config(&env, &repo, &model, false);
    let screen = Screen::new(&env);
    screen.line(&start);
    assert!(
        wait_until(Duration::from_secs(60), || screen
            .screen()
            .contains("Trust and continue")),
        "{}",
        screen.screen()
    );
    quit_codex(&screen);
    assert!(
        wait_until(Duration::from_secs(30), || screen
            .screen()
            .contains("worktree: removed")),
        "{}",
        screen.screen()
    );
    drop(screen);

    // Trusted: nothing asked, the task done at the prompt.
    codex_config(&env, &repo, &model, true);
    let screen = Screen::new_named(&env, "trusted");
    screen.line(&start);
    assert!(
        wait_until(Duration::from_secs(60), || screen
            .screen()
            .contains("Ask Codex to do anything")),
        "{}",
        screen.screen()
    );
    assert!(!screen.screen().contains("Trust and continue"));
    // Codex takes keys that come at once for a paste, where Enter is a new line: the task typed,
    // then Enter until the model is asked (each time once the burst is over).
    screen.send(TASK);
    assert!(wait_until(Duration::from_secs(10), || screen
        .screen()
        .contains(TASK)));
    for _ in 0..10 {
        screen.key("Enter");
        if wait_until(Duration::from_secs(2), || {
            model.log().contains("/responses")
        }) {
            break;
        }
    }
    assert!(
        wait_until(Duration::from_secs(60), || screen.screen().contains("DONE")),
        "{}\nthe model saw:\n{}",
        screen.screen(),
        model.log()
    );
    quit_codex(&screen);
    assert!(
        wait_until(Duration::from_secs(30), || screen
            .screen()
            .contains("worktree: removed")),
        "{}",
        screen.screen()
    );
    let shown = screen.screen();
    assert!(
        shown.contains("Codex trusts the worktree, as you trusted the project in"),
        "{shown}"
    );
    // Its app server the job's own, up at once.
    assert!(!shown.contains("did not become ready"), "{shown}");
    no_unknown_setting(&shown);
    came_home(&env, &repo, &shown, "codex", "codex");
}

// ------------------------------------------------------------------------------------- aider

fn aider_headless(strict: bool) {
    agent("aider", "aider-chat");
    let env = TestEnv::new();
    let repo = project(&env);
    let model = model(&env, "aider", strict);
    let policy = strict.then(|| strict_with(&env, "aider"));
    let section = readme_section("aider");
    assert!(
        section.contains("--openai-api-base http://127.0.0.1:4000/v1 --model openai/<model>"),
        "{section}"
    );
    let base = format!("{}/v1", model.url());
    let mut cmd = vec![
        "aider",
        "--openai-api-base",
        &base,
        "--model",
        "openai/scripted",
        "--yes-always",
        "--no-check-update",
        "--no-analytics",
        "--no-show-release-notes",
        "--no-show-model-warnings",
    ];
    // The check and its commit are aider's own commands, loaded from the project; the edit is the
    // model's.
    let commands = match strict {
        false => "tools/aider-commands",
        true => "tools/aider-commands-strict",
    };
    cmd.extend(["--load", commands, "--message", "write hello.txt"]);
    let vars = [
        ("OPENAI_API_KEY", "sk-isolate-scripted-model"),
        ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
    ];
    let (out, said) = headless(&env, &repo, &model, policy.as_deref(), &vars, &cmd);
    assert_status(&out, 0);
    came_home(&env, &repo, &said, "aider", "aider");
    if strict {
        kept_the_secret(&env, &repo, &said);
    }
    // Its histories in the job's TMPDIR, its cache ignored (both gone with the job), nothing of
    // aider's in the branch, and no line of its in a .gitignore.
    let branch = format!("isolate/{}", job_id(&said));
    let files = env.git(&repo, ["ls-tree", "-r", "--name-only", &branch]);
    assert!(!files.contains(".aider"), "{files}");
    assert_eq!(
        env.git(&repo, ["show", &format!("{branch}:.gitignore")]),
        "target/"
    );
    assert!(!said.contains("to .gitignore"), "{said}");
}

#[test]
fn aider_works_headless_and_its_commits_come_home_with_the_worktree_removed() {
    aider_headless(false);
}

#[test]
fn aider_works_under_strict_with_its_profile() {
    aider_headless(true);
}

// ---------------------------------------------------------------------------------- opencode

fn opencode_headless(strict: bool) {
    agent("opencode", "opencode-ai");
    let env = TestEnv::new();
    let repo = project(&env);
    let model = model(&env, "opencode", strict);
    let config = env.home.join(".config/opencode");
    fs::create_dir_all(&config).unwrap();
    fs::write(
        config.join("opencode.json"),
        readme_block("opencode", "json", &model),
    )
    .unwrap();
    let policy = strict.then(|| strict_with(&env, "opencode"));
    let vars = [
        ("OPENAI_API_KEY", "sk-isolate-scripted-model"),
        ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
    ];
    // Run as is, not behind `cd "$ISOLATE_WORKTREE"`: opencode follows PWD, the job's directory.
    let cmd = ["opencode", "run", TASK];
    let (out, said) = headless(&env, &repo, &model, policy.as_deref(), &vars, &cmd);
    assert_status(&out, 0);
    came_home(&env, &repo, &said, "opencode", "opencode");
    if strict {
        kept_the_secret(&env, &repo, &said);
    }
}

#[test]
fn opencode_works_headless_where_it_follows_pwd_and_its_commit_comes_home() {
    opencode_headless(false);
}

#[test]
fn opencode_works_under_strict_with_its_profile() {
    opencode_headless(true);
}

/// `isolate exec` into a kept job's worktree: opencode, which follows `PWD`, works there too, and
/// its commit comes home when the job is settled.
#[test]
fn opencode_works_through_exec_in_a_kept_worktree() {
    agent("opencode", "opencode-ai");
    let env = TestEnv::new();
    let repo = project(&env);
    let model = model(&env, "opencode", false);
    let config = env.home.join(".config/opencode");
    fs::create_dir_all(&config).unwrap();
    fs::write(
        config.join("opencode.json"),
        readme_block("opencode", "json", &model),
    )
    .unwrap();
    // exec takes the job's recorded policy, not a run's --allow-net: the model is the policy's.
    let policy = env.file(
        "opencode-model.toml",
        &format!(
            "extends = \"opencode\"\n[network]\nallow = [\"{}\"]\n",
            model.destination()
        ),
    );
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--keep",
            "--policy",
            policy.to_str().unwrap(),
            "--",
            "true",
        ],
    );
    assert_status(&out, 0);
    let id = job_id(&stderr(&out));
    let vars = [
        ("OPENAI_API_KEY", "sk-isolate-scripted-model"),
        ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
    ];
    let out = env.isolate_with(
        &repo,
        &vars,
        &[
            "exec",
            &id,
            "--timeout",
            RUN_LIMIT,
            "--",
            "opencode",
            "run",
            TASK,
        ],
    );
    let said = format!(
        "{}{}\nthe model saw:\n{}",
        stdout(&out),
        stderr(&out),
        model.log()
    );
    assert_status(&out, 0);
    assert!(refusals(&said).is_empty(), "{:?}", refusals(&said));
    let out = env.isolate(&repo, ["rm", &id]);
    assert_status(&out, 0);
    let branch = format!("isolate/{id}");
    let show = |file: &str| env.git(&repo, ["show", &format!("{branch}:{file}")]) + "\n";
    assert_eq!(show("hello.txt"), "hello from opencode\n", "{said}");
    assert_eq!(show("proof.txt"), PROOF, "{said}");
    assert!(env.worktree_dirs().is_empty());
    assert!(left_running(&env, "opencode").is_empty());
    env.assert_fsck(&repo);
}

// -------------------------------------------------------------------------------- Gemini CLI

fn gemini_headless(strict: bool) {
    agent("gemini", "@google/gemini-cli");
    let env = TestEnv::new();
    let repo = project(&env);
    let model = model(&env, "gemini", strict);
    let state = env.home.join(".gemini");
    fs::create_dir_all(&state).unwrap();
    fs::write(
        state.join("settings.json"),
        readme_block("Gemini CLI", "json", &model),
    )
    .unwrap();
    let policy = strict.then(|| strict_with(&env, "gemini"));
    let section = readme_section("Gemini CLI");
    assert!(
        section.contains("GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4000"),
        "{section}"
    );
    let url = model.url();
    let vars = [
        ("GOOGLE_GEMINI_BASE_URL", url.as_str()),
        ("GEMINI_API_KEY", "isolate-scripted"),
    ];
    let cmd = ["gemini", "-p", TASK, "--yolo"];
    if !strict {
        // An untrusted project: Gemini CLI refuses to work headless, and the job changes nothing.
        let (out, said) = headless(&env, &repo, &model, None, &vars, &cmd);
        assert_status(&out, 55);
        assert!(
            said.contains("not running in a trusted directory"),
            "{said}"
        );
        assert!(said.contains("worktree: removed"), "{said}");
    }
    // Trusted by the user's own rules: the job's copy trusts the worktree.
    fs::write(
        state.join("trustedFolders.json"),
        serde_json::json!({ repo.to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    let (out, said) = headless(&env, &repo, &model, policy.as_deref(), &vars, &cmd);
    assert_status(&out, 0);
    assert!(
        said.contains("Gemini CLI trusts the worktree, as you trusted the project in"),
        "{said}"
    );
    came_home(&env, &repo, &said, "gemini", "gemini");
    if strict {
        kept_the_secret(&env, &repo, &said);
    }
    // The user's trusted folders are never the job's to write.
    let rules = fs::read_to_string(state.join("trustedFolders.json")).unwrap();
    assert!(!rules.contains("worktrees"), "{rules}");
    if !strict {
        // A worktree cut from what only a job wrote is not what the user trusted: Gemini CLI's
        // settings and hooks there would run unasked. It refuses again.
        let base = format!("isolate/{}", job_id(&said));
        let destination = model.destination();
        let args = [
            "run",
            "--worktree",
            "--base",
            &base,
            "--allow-net",
            &destination,
            "--",
            "gemini",
            "-p",
            TASK,
            "--yolo",
        ];
        let out = env.isolate_with(&repo, &vars, &args);
        assert_status(&out, 55);
        assert!(
            !stderr(&out).contains("trusts the worktree"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn gemini_cli_works_headless_in_a_trusted_project_and_its_commit_comes_home() {
    gemini_headless(false);
}

#[test]
fn gemini_cli_works_under_strict_with_its_profile() {
    gemini_headless(true);
}
