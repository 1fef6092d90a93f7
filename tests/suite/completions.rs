//! `completions` and `man`: generated from the command definitions, parsed by the real shells and
//! rendered by the real `man`; a JOB argument completes the ids on record.

use std::path::Path;
use std::process::Command;

use crate::support::*;

/// `program ARGS` in the test's environment with isolate on PATH, bounded; its output.
fn shell(env: &TestEnv, program: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(program);
    env.apply(&mut cmd);
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path).args(args);
    finish(
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
        LIMIT,
    )
}

#[test]
fn bash_completes_commands_options_and_the_ids_of_jobs_on_record() {
    let env = TestEnv::new();
    let out = env.isolate(env.path(), ["run", "--name", "alpha", "--", "true"]);
    assert_status(&out, 0);
    let ps = env.isolate(env.path(), ["ps", "--all", "--json"]);
    let jobs: serde_json::Value = serde_json::from_str(&stdout(&ps)).unwrap();
    let id = jobs[0]["id"].as_str().unwrap().to_string();

    let script = env.isolate(env.path(), ["completions", "bash"]);
    assert_status(&script, 0);
    let file = env.file("isolate.bash", &stdout(&script));
    assert_status(&shell(&env, "bash", &["-n", file.to_str().unwrap()]), 0);

    let complete = |words: &str, cword: usize| {
        let program = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; \
             COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}; \
             _isolate_with_jobs isolate \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$((COMP_CWORD-1))]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            file.display()
        );
        let out = shell(&env, "bash", &["-c", &program]);
        assert_status(&out, 0);
        stdout(&out)
    };
    let subcommands = complete("isolate st", 1);
    assert!(subcommands.lines().any(|l| l == "status"), "{subcommands}");
    assert!(subcommands.lines().any(|l| l == "stop"), "{subcommands}");
    let options = complete("isolate run --wo", 2);
    assert!(options.lines().any(|l| l == "--worktree"), "{options}");
    for command in ["status", "logs", "wait", "rm", "merge"] {
        let ids = complete(&format!("isolate {command} ''"), 2);
        assert!(ids.lines().any(|l| l == id), "{command}: {ids}");
    }
}

#[test]
fn zsh_and_fish_scripts_parse_and_complete_jobs_from_the_state_directory() {
    let env = TestEnv::new();
    for (shell_name, check) in [("zsh", vec!["-n"]), ("fish", vec!["--no-execute"])] {
        let script = env.isolate(env.path(), ["completions", shell_name]);
        assert_status(&script, 0);
        let text = stdout(&script);
        assert!(text.contains("__complete-jobs"), "{shell_name}: {text}");
        let file = env.file(&format!("isolate.{shell_name}"), &text);
        let mut args = check.clone();
        args.push(file.to_str().unwrap());
        let out = shell(&env, shell_name, &args);
        assert_status(&out, 0);
    }
    let out = env.isolate(env.path(), ["completions", "tcsh"]);
    assert_status(&out, 2);
}

#[test]
fn the_manual_pages_render_with_man() {
    let env = TestEnv::new();
    for (args, title, within) in [
        (vec!["man"], "isolate(1)", "isolate-run(1)"),
        (vec!["man", "run"], "isolate-run(1)", "--worktree"),
        (vec!["man", "merge"], "isolate-merge(1)", "--yes"),
    ] {
        let page = env.isolate(env.path(), &args);
        assert_status(&page, 0);
        let file = env.file("page.1", &stdout(&page));
        let out = shell(&env, "man", &["-l", file.to_str().unwrap()]);
        assert_status(&out, 0);
        let text = stdout(&out);
        assert!(
            text.contains(title) && text.contains(within),
            "{args:?}: {text}"
        );
    }
    let out = env.isolate(env.path(), ["man", "no-such-command"]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("no such command"));
}
