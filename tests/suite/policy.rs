//! Policies: the built-in profiles, user profiles and files, `extends`, network, strict reads, agent
//! state directories, environment, limits, fail-closed per feature, and the gaps shown as data by
//! reports, `policy show` and `doctor`. Every sandbox assertion goes both ways: what the policy
//! allows works, what it refuses is refused (and left unchanged).

use std::fs;
use std::net::TcpListener;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::*;

const BUILTINS: &[&str] = &[
    "default",
    "offline",
    "strict",
    "claude-code",
    "codex",
    "aider",
    "opencode",
    "gemini",
];

fn isolate_with(env: &TestEnv, dir: &Path, vars: &[(&str, &str)], args: &[&str]) -> Output {
    env.isolate_with(dir, vars, args)
}

fn policy_file(env: &TestEnv, name: &str, text: &str) -> PathBuf {
    env.file(name, text)
}

/// A job in `dir` (no worktree) under `policy`, running `script` with sh; returns its output and
/// its report.
fn job(env: &TestEnv, dir: &Path, policy: &str, script: &str) -> (Output, Value) {
    env.policy_job(dir, &[], policy, script)
}

fn job_with(
    env: &TestEnv,
    dir: &Path,
    vars: &[(&str, &str)],
    policy: &str,
    script: &str,
) -> (Output, Value) {
    env.policy_job(dir, vars, policy, script)
}

fn gaps(report: &Value) -> String {
    report["sandbox"]["gaps"].to_string()
}

fn show_json(env: &TestEnv, vars: &[(&str, &str)], policy: &str) -> (Output, Value) {
    let out = isolate_with(env, env.path(), vars, &["policy", "show", policy, "--json"]);
    let value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, value)
}

#[test]
fn every_file_in_the_policy_folder_is_a_builtin_that_parses_and_resolves() {
    let env = TestEnv::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("policy");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut builtins: Vec<String> = BUILTINS.iter().map(|s| s.to_string()).collect();
    builtins.sort();
    assert_eq!(names, builtins, "policy/ and the built-in profiles differ");
    for name in BUILTINS {
        // By name (compiled in) and as a file (the same text, read from disk).
        let file = dir.join(format!("{name}.toml"));
        for reference in [name.to_string(), file.display().to_string()] {
            let (out, value) = show_json(&env, &[], &reference);
            assert_status(&out, 0);
            assert_eq!(value["sources"][0], reference.as_str());
            for path in value["paths"].as_array().unwrap() {
                assert_ne!(path["outcome"], "failed", "{reference}: {path}");
            }
        }
        let text = fs::read_to_string(&file).unwrap();
        assert!(
            text.starts_with(&format!("# {name}: ")),
            "{name}.toml does not open with a comment block saying what it is for"
        );
        // And a real job runs under it.
        let (out, report) = job(&env, env.path(), name, "true");
        assert_status(&out, 0);
        assert_eq!(report["sandbox"]["policy"], *name);
        assert_eq!(report["sandbox"]["enforced"], true);
    }
}

#[test]
fn offline_refuses_a_tcp_connect_and_bind_that_default_allows() {
    // The Landlock-only tier; in the namespaces tier an offline job binds in a network namespace
    // of its own that nothing reaches, and nothing outside is reachable (ordinary.rs).
    let env = TestEnv::landlock_only();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!(
        "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' && echo connected; \
         perl -MIO::Socket::INET -e 'IO::Socket::INET->new(LocalAddr => q(127.0.0.1), LocalPort => 0, Listen => 1) or exit 1' \
         && echo bound; echo done"
    );
    let (out, report) = job(&env, env.path(), "default", &connect);
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "connected\nbound\ndone\n", "{}", stderr(&out));
    assert!(gaps(&report).contains("tcp connect and bind are not restricted"));

    // The user's server stays out of reach; a server of the job's own on loopback listens (the
    // broker holds it to loopback: ordinary.rs).
    let (out, report) = job(&env, env.path(), "offline", &connect);
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "bound\ndone\n", "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Permission denied"),
        "{}",
        stderr(&out)
    );
    let gaps = gaps(&report);
    assert!(!gaps.contains("tcp connect"), "{gaps}");
    assert!(!gaps.contains("udp"), "{gaps}");
    drop(listener);
}

#[test]
fn a_port_list_allows_those_ports_only() {
    let env = TestEnv::new();
    let allowed = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let (a, o) = (
        allowed.local_addr().unwrap().port(),
        other.local_addr().unwrap().port(),
    );
    let file = policy_file(
        &env,
        "ports.toml",
        &format!("extends = \"default\"\n[network]\nconnect = [{a}]\n"),
    );
    let script = format!(
        "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{a}' && echo allowed; \
         bash -c 'exec 3<>/dev/tcp/127.0.0.1/{o}' && echo other; echo done"
    );
    let (out, report) = job(&env, env.path(), file.to_str().unwrap(), &script);
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "allowed\ndone\n", "{}", stderr(&out));
    assert!(gaps(&report).contains("tcp bind is not restricted"));
}

#[test]
fn strict_refuses_reading_the_home_directory_that_default_can_read() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(env.home.join("secret.txt"), "s3cret\n").unwrap();
    fs::create_dir_all(env.home.join(".ssh")).unwrap();
    fs::write(env.home.join(".ssh/id_ed25519"), "key\n").unwrap();
    let script = "cat \"$HOME/secret.txt\"; ls \"$HOME/.ssh\"; cat README; echo done";

    let (out, report) = job(&env, &repo, "default", script);
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "s3cret\nid_ed25519\nhello\ndone\n");
    assert!(gaps(&report).contains("reads are not restricted"));

    // Without a worktree: the current directory (the project) stays readable, the home does not.
    let (out, report) = job(&env, &repo, "strict", script);
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "hello\ndone\n", "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Permission denied"),
        "{}",
        stderr(&out)
    );
    assert!(!gaps(&report).contains("reads are not restricted"));

    // In a worktree: the job reads the project and commits (git and its configuration are readable).
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--policy",
            "strict",
            "--",
            "sh",
            "-c",
            "cat \"$HOME/secret.txt\"; cat \"$ISOLATE_REPO/README\" && echo x > new.txt && git add new.txt \
             && git commit -q -m strict && echo committed",
        ],
    );
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "hello\ncommitted\n", "{}", stderr(&out));
    assert_eq!(env.isolate_branches(&repo).len(), 1);
    env.assert_fsck(&repo);
}

/// A store a variable moves to a path with a `$` in it is denied there (the policy's expansion
/// gives the `$` back, never takes it for a variable); one whose value is not UTF-8, which no rule
/// can name, fails the run (125) before the job starts, and `policy show` says why.
#[test]
fn a_store_variable_with_a_dollar_or_not_utf8_never_leaves_the_store_readable() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let gnupg = env.path().join("keys$HOME/gnupg");
    fs::create_dir_all(&gnupg).unwrap();
    fs::write(gnupg.join("k.key"), "gpg key\n").unwrap();
    let at = gnupg.to_str().unwrap();
    let script = format!("cat '{at}/k.key' 2>/dev/null || echo refused");
    let (out, _) = job_with(&env, &repo, &[("GNUPGHOME", at)], "default", &script);
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "refused\n", "{}", stderr(&out));
    let odd = std::ffi::OsStr::from_bytes(b"/tmp/gnupg-\xff");
    let run = |args: &[&str]| {
        let mut cmd = env.isolate_cmd(&repo, args);
        cmd.env("GNUPGHOME", odd);
        finish(
            cmd.stdin(std::process::Stdio::null()).spawn().unwrap(),
            LIMIT,
        )
    };
    let out = run(&["run", "--", "sh", "-c", "echo started"]);
    assert_status(&out, 125);
    assert!(!stdout(&out).contains("started"));
    assert!(
        stderr(&out).contains("$GNUPGHOME is not UTF-8"),
        "{}",
        stderr(&out)
    );
    let out = run(&["policy", "show", "default"]);
    assert!(
        stdout(&out).contains("$GNUPGHOME is not UTF-8"),
        "{}",
        stdout(&out)
    );
}

/// A credential store a variable moves is refused where the variable moves it, in every profile:
/// `GNUPGHOME`, `KUBECONFIG` (a list), `CARGO_HOME`'s credentials (not the rest of it), and the
/// `~/.config` stores under `XDG_CONFIG_HOME`. What is beside them stays readable.
#[test]
fn credential_stores_a_variable_moves_are_refused_where_it_moves_them() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let keys = env.path().join("keys");
    let files = [
        ("gnupg/private-keys-v1.d/k.key", "gpg key"),
        ("kube/one.yaml", "kube token one"),
        ("kube/two.yaml", "kube token two"),
        ("cargo/credentials.toml", "cargo token"),
        ("cfg/gh/hosts.yml", "gh token"),
        ("run/containers/auth.json", "registry login"),
    ];
    for (path, text) in files {
        let path = keys.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, format!("{text}\n")).unwrap();
    }
    fs::write(keys.join("cargo/config.toml"), "beside\n").unwrap();
    let at = |p: &str| keys.join(p).display().to_string();
    let kubeconfig = format!("{}:{}", at("kube/one.yaml"), at("kube/two.yaml"));
    let vars = [
        ("GNUPGHOME", at("gnupg")),
        ("KUBECONFIG", kubeconfig),
        ("CARGO_HOME", at("cargo")),
        ("XDG_CONFIG_HOME", at("cfg")),
        ("XDG_RUNTIME_DIR", at("run")),
    ];
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let script = format!(
        "for f in {}; do cat \"$f\" 2>/dev/null || echo refused; done; cat {} 2>/dev/null; true",
        files.map(|(p, _)| at(p)).join(" "),
        at("cargo/config.toml")
    );
    for policy in ["default", "strict"] {
        let (out, _) = job_with(&env, &repo, &vars, policy, &script);
        assert_status(&out, 0);
        let refused = "refused\n".repeat(files.len());
        let want = match policy {
            "default" => format!("{refused}beside\n"),
            _ => refused,
        };
        assert_eq!(stdout(&out), want, "{policy}: {}", stderr(&out));
    }
}

#[test]
fn allow_write_adds_to_any_policy() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let out_dir = env.home.join("out");
    fs::create_dir(&out_dir).unwrap();
    let out = env.isolate(
        &repo,
        [
            "run",
            "--policy",
            "strict",
            "--allow-write",
            out_dir.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo made > \"$HOME/out/file\" && cat \"$HOME/out/file\"; echo x > \"$HOME/elsewhere\"; echo done",
        ],
    );
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "made\ndone\n", "{}", stderr(&out));
    assert!(!env.home.join("elsewhere").exists());
}

#[test]
fn variables_the_policy_removes_are_absent_and_the_ones_it_sets_are_present() {
    let env = TestEnv::new();
    let file = policy_file(
        &env,
        "env.toml",
        "extends = \"default\"\n[environment]\nremove = [\"MY_SETTING\"]\nset = { GREETING = \"hello\" }\nremove_matching = [\"CORP_*\"]\n",
    );
    let vars = [
        ("SSH_AUTH_SOCK", "/tmp/agent.sock"),
        ("MY_SETTING", "s"),
        ("KEPT", "kept"),
        ("GITHUB_TOKEN", "ghp_x"),
        ("AWS_SECRET_ACCESS_KEY", "aws"),
        ("DB_PASSWORD", "pw"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("CORP_SETTING", "c"),
    ];
    let script =
        "echo \"${SSH_AUTH_SOCK-unset} ${MY_SETTING-unset} ${KEPT-unset} ${GREETING-unset} \
                  ${GITHUB_TOKEN-unset} ${AWS_SECRET_ACCESS_KEY-unset} ${DB_PASSWORD-unset} \
                  ${ANTHROPIC_API_KEY-unset} ${CORP_SETTING-unset}\"";
    // Secret variables are gone under every profile; a profile adds patterns of its own.
    let (out, _) = job_with(&env, env.path(), &vars, "default", script);
    assert_status(&out, 0);
    assert_eq!(
        stdout(&out),
        "unset s kept unset unset unset unset unset c\n"
    );
    // Each named in the start line, by name only, with how to keep it.
    assert!(
        stderr(&out).contains(
            "isolate: note: secret variables not passed to the job: ANTHROPIC_API_KEY, \
             AWS_SECRET_ACCESS_KEY, DB_PASSWORD, GITHUB_TOKEN (pass one on with --env \
             NAME=\"$NAME\", or keep it in a profile's [environment] keep)"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("ghp_x"), "{}", stderr(&out));
    // Given back with --env, it is passed and not named.
    let out = env.isolate_with(
        env.path(),
        &vars,
        &[
            "run",
            "--policy",
            "default",
            "--env",
            "GITHUB_TOKEN=ghp_y",
            "--",
            "sh",
            "-c",
            "echo $GITHUB_TOKEN",
        ],
    );
    assert_eq!(stdout(&out), "ghp_y\n");
    assert!(
        stderr(&out).contains(
            "not passed to the job: ANTHROPIC_API_KEY, AWS_SECRET_ACCESS_KEY, DB_PASSWORD (pass"
        ),
        "{}",
        stderr(&out)
    );
    let (out, _) = job_with(&env, env.path(), &vars, file.to_str().unwrap(), script);
    assert_status(&out, 0);
    assert_eq!(
        stdout(&out),
        "unset unset kept hello unset unset unset unset unset\n"
    );
    // An agent's profile keeps its own agent's key, and nothing else of them.
    let (out, _) = job_with(&env, env.path(), &vars, "claude-code", script);
    assert_status(&out, 0);
    assert_eq!(
        stdout(&out),
        "unset s kept unset unset unset unset sk-ant c\n"
    );
    assert!(
        stderr(&out).contains(
            "not passed to the job: AWS_SECRET_ACCESS_KEY, DB_PASSWORD, GITHUB_TOKEN (pass"
        ),
        "{}",
        stderr(&out)
    );
    let (out, _) = job_with(&env, env.path(), &vars, "strict", script);
    assert_status(&out, 0);
    assert_eq!(
        stdout(&out),
        "unset s kept unset unset unset unset unset c\n"
    );
}

/// `[worktree] ignore`: the job's git ignores what the policy names, the cleanup trusts it as the
/// project's own (the worktree goes, the files with it), and `policy show` says so; a job that
/// writes the same rule itself is still kept. A value names the job's own `$TMPDIR`.
#[test]
fn a_policys_worktree_ignore_rules_are_the_projects_own_to_the_job_and_the_cleanup() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let file = policy_file(
        &env,
        "scratch.toml",
        "extends = \"default\"\n[worktree]\nignore = [\".scratch*\"]\n\
         [environment]\ndefault = { SCRATCH_LOG = \"$TMPDIR/scratch.log\" }\n",
    );
    let policy = file.to_str().unwrap();
    let script = "mkdir .scratch.cache && echo x > .scratch.cache/db && echo \"$SCRATCH_LOG\" && \
                  git check-ignore -q .scratch.cache && git status --porcelain";
    let (out, report) = env.worktree_job(&repo, &["--policy", policy], script);
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap();
    // The job's own TMPDIR (by its short name where /tmp takes one).
    let said = stdout(&out);
    assert!(
        said.starts_with("/") && said.contains(id) && said.ends_with("/scratch.log\n"),
        "{said}"
    );
    assert_eq!(report["worktree"]["removed"], true, "{report}");
    assert_eq!(report["worktree"]["ignored"], 1, "{report}");
    // The same rule written by the job itself is no rule anybody reviewed.
    let script = "printf '.scratch*\\n' >> .git/info/exclude && mkdir .scratch.cache";
    let (out, report) = env.worktree_job(&repo, &[], script);
    assert_status(&out, 0);
    assert_eq!(report["worktree"]["removed"], false, "{report}");
    let out = env.isolate(env.path(), ["policy", "show", "aider"]);
    assert!(
        stdout(&out).contains("worktree      ignores: .aider*"),
        "{}",
        stdout(&out)
    );
    let (_, shown) = show_json(&env, &[], "aider");
    assert_eq!(shown["worktree"]["ignore"], serde_json::json!([".aider*"]));
    // A rule that would write two lines is refused where it is written.
    let bad = policy_file(&env, "bad.toml", "[worktree]\nignore = [\"a\\nb\"]\n");
    let out = env.isolate(
        &repo,
        ["run", "--policy", bad.to_str().unwrap(), "--", "true"],
    );
    assert_status(&out, 125);
    assert!(stderr(&out).contains("bad.toml"), "{}", stderr(&out));
}

#[test]
fn rlimits_are_in_force_in_the_job_and_the_policy_timeout_applies() {
    let env = TestEnv::new();
    let file = policy_file(
        &env,
        "limits.toml",
        "extends = \"default\"\n[limits]\nopen_files = 123\ncore_size = 0\naddress_space = \"4GiB\"\n",
    );
    let (out, _) = job(
        &env,
        env.path(),
        file.to_str().unwrap(),
        "ulimit -n; ulimit -Hn; ulimit -c; ulimit -v; ulimit -n 124 2>/dev/null || echo cannot-raise",
    );
    assert_status(&out, 0);
    assert_eq!(
        stdout(&out),
        format!("123\n123\n0\n{}\ncannot-raise\n", 4 << 20)
    );

    let file = policy_file(
        &env,
        "timeout.toml",
        "extends = \"default\"\n[limits]\ntimeout = \"1s\"\n",
    );
    let (out, report) = job(&env, env.path(), file.to_str().unwrap(), "sleep 30");
    assert_status(&out, 124);
    assert_eq!(report["state"], "timed_out");
    // --timeout wins over the policy's.
    let out = env.isolate(
        env.path(),
        [
            "run",
            "--policy",
            file.to_str().unwrap(),
            "--timeout",
            "60s",
            "--",
            "sh",
            "-c",
            "sleep 2; echo slept",
        ],
    );
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "slept\n");
}

#[test]
fn a_typo_in_a_policy_is_125_naming_the_file_the_line_and_the_key() {
    let env = TestEnv::new();
    let file = policy_file(
        &env,
        "typo.toml",
        "extends = \"default\"\n\n[filesystem]\nwrtie = [\"/tmp\"]\n",
    );
    let (out, report) = job(&env, env.path(), file.to_str().unwrap(), "echo ran");
    assert_status(&out, 125);
    assert_eq!(stdout(&out), "");
    assert_eq!(report, Value::Null);
    let err = stderr(&out);
    assert!(
        err.contains("wrtie") && err.contains("line 4") && err.contains(file.to_str().unwrap()),
        "{err}"
    );
    assert!(env.records().is_empty());
    // policy show: status 1, the same message.
    let out = env.isolate(env.path(), ["policy", "show", file.to_str().unwrap()]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("wrtie"), "{}", stderr(&out));
    // An unknown profile name, and a bad value.
    let (out, _) = job(&env, env.path(), "no-such-profile", "true");
    assert_status(&out, 125);
    assert!(stderr(&out).contains("no such profile"), "{}", stderr(&out));
    let file = policy_file(&env, "bad.toml", "[network]\nconnect = \"some\"\n");
    let (out, _) = job(&env, env.path(), file.to_str().unwrap(), "true");
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("some") && stderr(&out).contains("line 2"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_missing_write_path_is_125_and_a_missing_read_path_a_note() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let file = policy_file(
        &env,
        "missing.toml",
        "extends = \"default\"\n[filesystem]\nwrite = [\"~/no-such-dir\"]\n",
    );
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--policy",
            file.to_str().unwrap(),
            "--",
            "echo",
            "ran",
        ],
    );
    assert_status(&out, 125);
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("no-such-dir"), "{}", stderr(&out));
    assert!(env.worktree_dirs().is_empty() && env.records().is_empty());
    assert!(env.isolate_branches(&repo).is_empty());
    let out = env.isolate(env.path(), ["policy", "show", file.to_str().unwrap()]);
    assert_status(&out, 1);

    let file = policy_file(
        &env,
        "missing-read.toml",
        "extends = \"default\"\n[filesystem]\nread = [\"/no-such-dir\"]\n",
    );
    let (out, _) = job(&env, env.path(), file.to_str().unwrap(), "echo ran");
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "ran\n");
    assert!(
        stderr(&out).contains("note: /no-such-dir skipped"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn missing_create_makes_parents_and_a_policy_that_fails_leaves_nothing_it_made() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let cargo = env.path().join("cargo home");
    let vars = [("CARGO_HOME", cargo.to_str().unwrap())];
    // Parents are made too ($CARGO_HOME itself is missing), each 0700.
    let file = policy_file(
        &env,
        "cargo.toml",
        "extends = \"default\"\n[filesystem]\nwrite = [{ path = \"$CARGO_HOME/registry/cache\", missing = \"create\" }]\n",
    );
    let script = "echo x > \"$CARGO_HOME/registry/cache/crate\" && echo wrote";
    let (out, _) = job_with(&env, env.path(), &vars, file.to_str().unwrap(), script);
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "wrote\n", "{}", stderr(&out));
    for dir in ["", "registry", "registry/cache"] {
        let mode = fs::metadata(cargo.join(dir)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{dir}");
    }

    let records = env.records().len();
    // A later path of the list that cannot be made: 125, checked before anything is created.
    let blocker = env.file("blocker", "a file\n");
    let text = format!(
        "extends = \"default\"\n[filesystem]\nwrite = [\n  {{ path = \"~/first/a\", missing = \"create\" }},\n  {{ path = \"{}/under\", missing = \"create\" }},\n]\n",
        blocker.display()
    );
    let file = policy_file(&env, "second.toml", &text);
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--policy",
            file.to_str().unwrap(),
            "--",
            "echo",
            "ran",
        ],
    );
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("is not a directory"),
        "{}",
        stderr(&out)
    );
    assert!(!env.home.join("first").exists());
    assert!(env.worktree_dirs().is_empty() && env.records().len() == records);

    // One that fails while being made (a name longer than the filesystem holds): what was made
    // before it is undone.
    let long = "n".repeat(300);
    let text = format!(
        "extends = \"default\"\n[filesystem]\nwrite = [\n  {{ path = \"~/first/a\", missing = \"create\" }},\n  {{ path = \"~/second/{long}\", missing = \"create\" }},\n]\n"
    );
    let file = policy_file(&env, "long.toml", &text);
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--policy",
            file.to_str().unwrap(),
            "--",
            "echo",
            "ran",
        ],
    );
    assert_status(&out, 125);
    assert!(stderr(&out).contains("cannot create"), "{}", stderr(&out));
    assert!(!env.home.join("first").exists());
    assert!(!env.home.join("second").exists());
    assert!(env.worktree_dirs().is_empty() && env.records().len() == records);

    // A run that fails after the plan (CMD not found, 127) undoes it as well.
    let out = env.isolate_with(
        env.path(),
        &vars,
        &[
            "run",
            "--policy",
            env.path().join("cargo.toml").to_str().unwrap(),
            "--",
            "no-such-command-x",
        ],
    );
    assert_status(&out, 127);
    fs::remove_dir_all(&cargo).unwrap();
    let out = env.isolate_with(
        env.path(),
        &vars,
        &[
            "run",
            "--policy",
            env.path().join("cargo.toml").to_str().unwrap(),
            "--",
            "no-such-command-x",
        ],
    );
    assert_status(&out, 127);
    assert!(!cargo.exists(), "{}", stderr(&out));
}

#[test]
fn policy_show_json_has_every_field() {
    let env = TestEnv::new();
    let (out, value) = show_json(&env, &[], "claude-code");
    assert_status(&out, 0);
    for key in [
        "name",
        "sources",
        "landlock_abi",
        "paths",
        "network",
        "scopes",
        "environment",
        "worktree",
        "limits",
        "timeout",
        "compatibility",
        "features",
        "gaps",
        "notes",
        "problems",
    ] {
        assert!(value.get(key).is_some(), "no {key} in {value}");
    }
    assert_eq!(value["name"], "claude-code");
    assert_eq!(
        value["sources"],
        serde_json::json!(["claude-code", "default"])
    );
    let paths = value["paths"].as_array().unwrap();
    let claude = paths.iter().find(|p| p["written"] == "~/.claude").unwrap();
    assert_eq!(claude["access"], "write");
    // The test's HOME has no ~/.claude: a run would create it, show creates nothing.
    assert_eq!(claude["outcome"], "will_create");
    assert!(!env.home.join(".claude").exists());
    assert!(claude["rights"]
        .as_array()
        .unwrap()
        .contains(&Value::from("make_reg")));
    let root = paths.iter().find(|p| p["written"] == "/").unwrap();
    assert_eq!(
        root["rights"],
        serde_json::json!(["execute", "read_file", "read_dir"])
    );
    assert_eq!(value["network"]["tcp_connect"], "all");
    assert_eq!(value["scopes"]["signals"], true);
    assert!(value["environment"]["remove"]
        .as_array()
        .unwrap()
        .contains(&Value::from("SSH_AUTH_SOCK")));
    for key in ["open_files", "processes", "core_size", "address_space"] {
        assert!(value["limits"].get(key).is_some(), "no limits.{key}");
    }
    assert_eq!(value["compatibility"]["scopes"], "best_effort");
    assert_eq!(value["features"].as_array().unwrap().len(), 5);
    assert!(value["gaps"].to_string().contains("udp"));
    assert_eq!(value["network"]["udp"], "all");
    assert_eq!(value["network"]["unix_datagram"], "none");
    assert_eq!(value["network"]["unix_sockets"], serde_json::json!([]));
    assert_eq!(value["compatibility"]["seccomp"], "required");

    let (_, offline) = show_json(&env, &[], "offline");
    assert_eq!(offline["network"]["tcp_connect"], "none");
    assert_eq!(offline["network"]["tcp_bind"], "none");
    assert_eq!(offline["network"]["udp"], "none");
    assert!(!offline["gaps"].to_string().contains("udp"));
    let (_, strict) = show_json(&env, &[], "strict");
    assert_eq!(strict["limits"]["core_size"], 0);
    assert!(!strict["gaps"]
        .to_string()
        .contains("reads are not restricted"));

    // The human form names the same things.
    let out = env.isolate(env.path(), ["policy", "show", "offline"]);
    assert_status(&out, 0);
    let text = stdout(&out);
    for needle in [
        "policy offline (extends default)",
        "tcp connect: none",
        "SSH_AUTH_SOCK",
        "gaps",
    ] {
        assert!(text.contains(needle), "no {needle:?} in {text}");
    }
    // Bad usage is 2.
    let out = env.isolate(env.path(), ["policy", "show", "a", "b"]);
    assert_status(&out, 2);
}

#[test]
fn doctor_reports_the_abi_features_cgroup_git_and_gaps() {
    let env = TestEnv::new();
    let out = env.isolate(env.path(), ["doctor", "--json"]);
    assert_status(&out, 0);
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let abi = value["landlock"]["abi"].as_u64().expect("an ABI");
    assert!(abi >= 3, "{value}");
    // A test run capped below the kernel's ABI (ISOLATE_LANDLOCK_ABI_MAX) sees the cap in `abi`.
    let kernel_abi = value["landlock"]["kernel_abi"]
        .as_u64()
        .expect("the kernel's ABI");
    match std::env::var("ISOLATE_LANDLOCK_ABI_MAX") {
        Ok(cap) => assert_eq!(abi, kernel_abi.min(cap.parse().unwrap())),
        Err(_) => assert_eq!(kernel_abi, abi),
    }
    assert_eq!(value["sandbox"], true);
    assert_eq!(value["features"].as_array().unwrap().len(), 5);
    let seccomp = value["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["feature"] == "seccomp")
        .expect("the seccomp layer is a feature");
    assert_eq!(seccomp["available"], true, "{seccomp}");
    assert!(value["git"].as_str().unwrap().starts_with("git version"));
    assert_eq!(
        value["state_dir"].as_str().unwrap(),
        env.state.to_str().unwrap()
    );
    assert!(value["worktrees_dir"]
        .as_str()
        .unwrap()
        .ends_with("worktrees"));
    assert!(value["cgroup"].get("writable").is_some());
    assert!(value["gaps"].to_string().contains("udp"));

    // As on an older kernel: the ABI isolate uses and the features it loses.
    let out = isolate_with(
        &env,
        env.path(),
        &[("ISOLATE_LANDLOCK_ABI_MAX", "4")],
        &["doctor", "--json"],
    );
    assert_status(&out, 0);
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["landlock"]["abi"], 4);
    let scopes = value["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["feature"] == "scopes")
        .unwrap()
        .clone();
    // Below ABI 6 the seccomp layer holds the scopes; without it too, signals are a gap.
    assert_eq!(scopes["available"], true, "{value}");
    assert!(!value["gaps"].to_string().contains("signals"), "{value}");
    let out = isolate_with(
        &env,
        env.path(),
        &[
            ("ISOLATE_LANDLOCK_ABI_MAX", "4"),
            ("ISOLATE_NO_SECCOMP", "1"),
        ],
        &["doctor", "--json"],
    );
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let scopes = value["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["feature"] == "scopes")
        .unwrap()
        .clone();
    assert_eq!(scopes["available"], false, "{value}");
    assert!(value["gaps"].to_string().contains("signals"), "{value}");
    // Without write containment isolate cannot sandbox here: 1.
    let out = isolate_with(
        &env,
        env.path(),
        &[("ISOLATE_LANDLOCK_ABI_MAX", "2")],
        &["doctor"],
    );
    assert_status(&out, 1);
    assert!(
        stdout(&out).contains("landlock      ABI 2"),
        "{}",
        stdout(&out)
    );
    assert!(stderr(&out).contains("cannot sandbox"), "{}", stderr(&out));
}

#[test]
fn claude_code_writes_its_state_directory_and_nothing_else_of_the_home_directory() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(env.home.join(".bashrc"), "original\n").unwrap();
    let script = "mkdir -p \"$HOME/.claude/projects\" && echo s > \"$HOME/.claude/projects/session\" && echo state; \
                  echo evil > \"$HOME/.bashrc\"; echo evil > \"$HOME/new-file\"; mkdir \"$HOME/.config\"; \
                  echo '{\"k\":1}' > \"$HOME/.claude.json\" && echo home-config; \
                  echo \"dir=$CLAUDE_CONFIG_DIR\"; cat \"$CLAUDE_CONFIG_DIR/.claude.json\" 2>/dev/null; \
                  echo '{\"k\":2}' > \"$CLAUDE_CONFIG_DIR/.claude.json.tmp\" && mv \"$CLAUDE_CONFIG_DIR/.claude.json.tmp\" \"$CLAUDE_CONFIG_DIR/.claude.json\" && echo config; echo done";
    let claude = |env: &TestEnv| {
        env.isolate(
            &repo,
            [
                "run",
                "--worktree",
                "--policy",
                "claude-code",
                "--",
                "sh",
                "-c",
                script,
            ],
        )
    };
    // No ~/.claude and no ~/.claude.json yet: the directory is created, and the configuration
    // lives in it (CLAUDE_CONFIG_DIR), written atomically; the home directory stays read-only.
    let out = claude(&env);
    assert_status(&out, 0);
    let home = env.home.display();
    assert_eq!(
        stdout(&out),
        format!("state\ndir={home}/.claude\nconfig\ndone\n"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("skipped"), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(env.home.join(".claude/projects/session")).unwrap(),
        "s\n"
    );
    assert_eq!(
        fs::read_to_string(env.home.join(".bashrc")).unwrap(),
        "original\n"
    );
    assert!(!env.home.join("new-file").exists());
    assert!(!env.home.join(".config").exists());
    assert!(!env.home.join(".claude.json").exists());
    assert_eq!(
        fs::read_to_string(env.home.join(".claude/.claude.json")).unwrap(),
        "{\"k\":2}\n"
    );

    // The user's ~/.claude.json (their login and settings) is carried over the first time, into a
    // fresh ~/.claude, and is never written by a job.
    fs::remove_dir_all(env.home.join(".claude")).unwrap();
    fs::write(env.home.join(".claude.json"), "{\"user\":1}\n").unwrap();
    let out = claude(&env);
    assert_status(&out, 0);
    assert_eq!(
        stdout(&out),
        format!("state\ndir={home}/.claude\n{{\"user\":1}}\nconfig\ndone\n"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("carried ~/.claude.json over to ~/.claude/.claude.json"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(env.home.join(".claude.json")).unwrap(),
        "{\"user\":1}\n"
    );
    // Once only: the job's own copy is kept from then on.
    let out = claude(&env);
    assert_status(&out, 0);
    assert!(stdout(&out).contains("{\"k\":2}"), "{}", stdout(&out));
    assert!(!stderr(&out).contains("carried"), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(env.home.join(".bashrc")).unwrap(),
        "original\n"
    );

    // codex: ~/.codex, created.
    let out = env.isolate(
        &repo,
        [
            "run",
            "--policy",
            "codex",
            "--",
            "sh",
            "-c",
            "echo c > \"$HOME/.codex/auth\" && echo codex; echo evil > \"$HOME/.claude/x\"; echo done",
        ],
    );
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "codex\ndone\n", "{}", stderr(&out));
    assert!(!env.home.join(".claude/x").exists());
}

#[test]
fn extends_merges_user_profiles_and_a_cycle_is_an_error() {
    let env = TestEnv::new();
    // A user profile by name, in ~/.config (XDG_CONFIG_HOME unset), extending a built-in.
    let dir = env.home.join(".config/isolate/policy");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("mine.toml"),
        "# mine: offline with a greeting\nextends = \"offline\"\n[environment]\nset = { GREETING = \"hi\" }\n",
    )
    .unwrap();
    let (out, value) = show_json(&env, &[], "mine");
    assert_status(&out, 0);
    assert_eq!(
        value["sources"],
        serde_json::json!(["mine", "offline", "default"])
    );
    assert_eq!(value["network"]["tcp_connect"], "none");
    assert_eq!(value["environment"]["set"]["GREETING"], "hi");
    assert!(value["environment"]["remove"]
        .as_array()
        .unwrap()
        .contains(&Value::from("SSH_AUTH_SOCK")));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script =
        format!("echo $GREETING; bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' || echo refused");
    let (out, report) = job(&env, env.path(), "mine", &script);
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "hi\nrefused\n");
    assert_eq!(report["sandbox"]["policy"], "mine");

    // $XDG_CONFIG_HOME wins over ~/.config.
    let xdg = env.path().join("xdg");
    fs::create_dir_all(xdg.join("isolate/policy")).unwrap();
    fs::write(
        xdg.join("isolate/policy/mine.toml"),
        "extends = \"default\"\n[environment]\nset = { GREETING = \"xdg\" }\n",
    )
    .unwrap();
    let (out, _) = job_with(
        &env,
        env.path(),
        &[("XDG_CONFIG_HOME", xdg.to_str().unwrap())],
        "mine",
        "echo $GREETING",
    );
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "xdg\n");

    // Files extend files relative to themselves; a cycle is an error naming it.
    let sub = env.path().join("policies");
    fs::create_dir_all(&sub).unwrap();
    fs::write(sub.join("a.toml"), "extends = \"b.toml\"\n").unwrap();
    fs::write(sub.join("b.toml"), "extends = \"./a.toml\"\n").unwrap();
    let a = sub.join("a.toml");
    let (out, _) = job(&env, env.path(), a.to_str().unwrap(), "echo ran");
    assert_status(&out, 125);
    assert!(stderr(&out).contains("cycle"), "{}", stderr(&out));
    fs::write(dir.join("self.toml"), "extends = \"self\"\n").unwrap();
    let (out, _) = job(&env, env.path(), "self", "echo ran");
    assert_status(&out, 125);
    assert!(stderr(&out).contains("cycle"), "{}", stderr(&out));
    let out = env.isolate(env.path(), ["policy", "show", "self"]);
    assert_status(&out, 1);

    // A user profile may not take a built-in's name.
    fs::write(dir.join("strict.toml"), "extends = \"default\"\n").unwrap();
    let (out, _) = job(&env, env.path(), "strict", "echo ran");
    assert_status(&out, 125);
    assert!(stderr(&out).contains("built-in"), "{}", stderr(&out));
    drop(listener);
}

#[test]
fn on_an_old_abi_a_best_effort_feature_is_a_gap_and_a_required_one_fails_closed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let abi3 = [("ISOLATE_LANDLOCK_ABI_MAX", "3")];
    // offline requires its TCP rules: refused before anything is made, naming feature, ABI, remedy.
    let out = isolate_with(
        &env,
        &repo,
        &abi3,
        &[
            "run",
            "--worktree",
            "--policy",
            "offline",
            "--",
            "echo",
            "ran",
        ],
    );
    assert_status(&out, 125);
    let err = stderr(&out);
    assert!(
        err.contains("tcp") && err.contains("ABI 4") && err.contains("ABI 3"),
        "{err}"
    );
    assert!(err.contains("best_effort") && err.contains("Hint"), "{err}");
    assert!(env.worktree_dirs().is_empty() && env.records().is_empty());
    assert!(env.isolate_branches(&repo).is_empty());

    // The same rules, best effort: the job runs, and the report lists what is not enforced.
    let file = policy_file(
        &env,
        "offline-best-effort.toml",
        "extends = \"offline\"\n[compatibility]\nnetwork = \"best_effort\"\n",
    );
    let (out, report) = job_with(&env, &repo, &abi3, file.to_str().unwrap(), "echo ran");
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "ran\n");
    assert_eq!(report["sandbox"]["landlock_abi"], 3);
    let gaps = gaps(&report);
    assert!(
        gaps.contains("tcp connect and bind rules of the policy are not enforced"),
        "{gaps}"
    );
    // Signals are the seccomp layer's below ABI 6: not a gap.
    assert!(
        gaps.contains("ioctl") && !gaps.contains("signals"),
        "{gaps}"
    );

    // strict requires its scopes: below ABI 6 the seccomp layer holds them, so it runs...
    let (out, report) = job_with(
        &env,
        &repo,
        &[("ISOLATE_LANDLOCK_ABI_MAX", "5")],
        "strict",
        "echo ran",
    );
    assert_status(&out, 0);
    assert_eq!(report["sandbox"]["landlock_abi"], 5);
    // ...and without that layer it fails closed, naming them.
    let (out, _) = job_with(
        &env,
        &repo,
        &[
            ("ISOLATE_LANDLOCK_ABI_MAX", "5"),
            ("ISOLATE_NO_SECCOMP", "1"),
        ],
        "strict",
        "echo ran",
    );
    assert_status(&out, 125);
    assert!(stderr(&out).contains("scopes"), "{}", stderr(&out));
}

#[test]
fn no_sandbox_is_a_gap_in_the_report() {
    let env = TestEnv::new();
    let (out, report) = job_with(&env, env.path(), &[], "default", "echo ran");
    assert_status(&out, 0);
    let enforced = gaps(&report);
    assert!(enforced.contains("file metadata"), "{enforced}");
    let report_path = env.path().join("r.json");
    let out = env.isolate(
        env.path(),
        [
            "run",
            "--no-sandbox",
            "--report",
            report_path.to_str().unwrap(),
            "--",
            "true",
        ],
    );
    assert_status(&out, 0);
    let value = env.report(&report_path);
    assert_eq!(value["sandbox"]["enforced"], false);
    assert!(gaps(&value).contains("--no-sandbox"));
}

/// A write rule of a policy over a directory that holds a credential store would open it (write
/// rules are not carved): the run is refused (125) naming the store, whether the rule is the
/// user's own or a built-in profile's with its variable aimed there (`CLAUDE_CONFIG_DIR`); and the
/// store is unchanged. A rule beside the store runs, and an agent's profile still writes its own
/// login (`~/.claude/.credentials.json`).
#[test]
fn a_policys_write_rule_over_a_credential_store_is_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::create_dir_all(env.home.join(".config/gh")).unwrap();
    let token = env.home.join(".config/gh/hosts.yml");
    fs::write(&token, "oauth_token: gho_secret\n").unwrap();
    fs::create_dir_all(env.home.join(".config/nvim")).unwrap();
    fs::create_dir_all(env.home.join(".claude")).unwrap();
    fs::write(env.home.join(".claude/.credentials.json"), "{}\n").unwrap();
    let script =
        "cat \"$HOME/.config/gh/hosts.yml\"; echo mine > \"$HOME/.config/gh/hosts.yml\"; echo done";
    for rule in ["~/.config", "$HOME/.config/", "~"] {
        let policy = policy_file(
            &env,
            "over.toml",
            &format!("extends = \"default\"\n[filesystem]\nwrite = [\"{rule}\"]\n"),
        );
        let (out, _) = job(&env, &repo, policy.to_str().unwrap(), script);
        assert_status(&out, 125);
        let err = stderr(&out);
        assert!(err.contains(".config/gh") || rule == "~", "{rule}: {err}");
        assert!(!stdout(&out).contains("gho_secret"), "{rule}");
    }
    let (out, _) = job_with(
        &env,
        &repo,
        &[(
            "CLAUDE_CONFIG_DIR",
            env.home.join(".config").to_str().unwrap(),
        )],
        "claude-code",
        script,
    );
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("holds the credential store"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(&token).unwrap(),
        "oauth_token: gho_secret\n"
    );
    let beside = policy_file(
        &env,
        "beside.toml",
        "extends = \"default\"\n[filesystem]\nwrite = [\"~/.config/nvim\"]\n",
    );
    let (out, _) = job(
        &env,
        &repo,
        beside.to_str().unwrap(),
        "echo set > \"$HOME/.config/nvim/init.lua\" && echo done",
    );
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    let (out, _) = job(
        &env,
        &repo,
        "claude-code",
        "echo '{\"t\":1}' > \"$HOME/.claude/.credentials.json\" && echo done",
    );
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
}

/// `--allow-write` over a directory that holds a credential store would open it (write rules are
/// not carved): refused (125), naming the store; a directory beside it, or the store itself named
/// on purpose, is not.
#[test]
fn allow_write_over_a_credential_store_is_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::create_dir_all(env.home.join(".config/gh")).unwrap();
    fs::write(
        env.home.join(".config/gh/hosts.yml"),
        "oauth_token: gho_secret\n",
    )
    .unwrap();
    fs::create_dir_all(env.home.join(".config/nvim")).unwrap();
    let config = env.home.join(".config");
    let run = |dir: &std::path::Path| {
        env.isolate(
            &repo,
            [
                "run",
                "--allow-write",
                dir.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                "cat \"$HOME/.config/gh/hosts.yml\"; echo done",
            ],
        )
    };
    let out = run(&config);
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("holds the credential store"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains(".config/gh"), "{}", stderr(&out));
    let out = run(&config.join("nvim"));
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
}

/// `policy show` of a policy a job's branch proposed (an `.isolate.toml` naming `wide.toml`): its
/// strings reach the user's terminal visible, never obeyed.
#[test]
fn policy_show_never_prints_a_policys_control_characters_raw() {
    let env = TestEnv::new();
    let file = env.file(
        "wide.toml",
        "extends = \"default\"\n[filesystem]\n\
         read = [ { path = \"/tmp/\\u001b]0;TITLE\\u0007x\", missing = \"ignore\" } ]\n\
         [environment.set]\nFOO = \"\\u001b]52;c;aGk=\\u0007bar\"\n",
    );
    let out = env.isolate(env.path(), ["policy", "show", file.to_str().unwrap()]);
    assert_status(&out, 0);
    let text = stdout(&out);
    assert!(
        text.contains("^[]0;TITLE^G") && text.contains("^[]52;c;aGk=^G"),
        "{text}"
    );
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
}
