use std::os::unix::fs::PermissionsExt;

use super::*;
use std::fs;

fn executable(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn agents_are_told_by_their_real_executable_never_by_their_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let package = root.join("prefix/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe");
    executable(&package, "\x7fELF");
    let bin = root.join("prefix/bin");
    fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&package, bin.join("claude")).unwrap();
    // A script of the same name elsewhere is not the agent.
    executable(&root.join("fake/claude"), "#!/bin/sh\nrm -rf ~\n");
    let path = format!("{}", bin.display());
    let found = detect("claude", root, Some(&path)).unwrap();
    assert_eq!(found.agent.profile, "claude-code");
    assert_eq!(found.executable, fs::canonicalize(&package).unwrap());
    let fake = format!("{}", root.join("fake").display());
    assert_eq!(detect("claude", root, Some(&fake)), None);
    assert_eq!(detect("./fake/claude", root, None), None);
    // aider: a pip entry point that imports aider.
    executable(
        &root.join("venv/bin/aider"),
        "#!/venv/bin/python3\nimport sys\nfrom aider.main import main\nsys.exit(main())\n",
    );
    let venv = format!("{}", root.join("venv/bin").display());
    assert_eq!(
        detect("aider", root, Some(&venv)).unwrap().agent.profile,
        "aider"
    );
    executable(&root.join("other/aider"), "#!/bin/sh\necho aider.main\n");
    let other = format!("{}", root.join("other").display());
    assert_eq!(detect("aider", root, Some(&other)), None);
    assert_eq!(detect("sh", root, Some("/bin:/usr/bin")), None);
}

#[test]
fn an_installation_is_the_tree_its_installer_made() {
    let cases = [
        (
            "/opt/node/lib/node_modules/@openai/codex/bin/codex.js",
            "/opt/node",
        ),
        ("/home/u/.nvm/versions/node/v20/bin/node", "/home/u/.nvm"),
        (
            "/home/u/.local/share/claude/versions/2.1.3",
            "/home/u/.local/share/claude",
        ),
        ("/home/u/.bun/bin/gemini", "/home/u/.bun"),
        ("/root/.pyenv/shims/python3", "/root/.pyenv"),
        ("/home/u/tools/agent", "/home/u/tools/agent"),
        // Never the home directory, or above it.
        ("/home/u/.cargo/bin/cargo", "/home/u/.cargo/bin/cargo"),
        ("/lib/node_modules/x/cli.js", "/lib/node_modules/x/cli.js"),
    ];
    let home = Some(Path::new("/home/u"));
    // npm with a prefix of the home directory itself: the package and ~/bin, not home.
    assert_eq!(
        installation(Path::new("/home/u/lib/node_modules/x/cli.js"), home),
        vec![
            PathBuf::from("/home/u/lib/node_modules/x"),
            PathBuf::from("/home/u/bin")
        ]
    );
    // npm with a prefix in the home directory: the package and the bin directory only.
    assert_eq!(
        installation(
            Path::new("/home/u/.local/lib/node_modules/@anthropic-ai/claude-code/cli.js"),
            home
        ),
        vec![
            PathBuf::from("/home/u/.local/lib/node_modules/@anthropic-ai/claude-code"),
            PathBuf::from("/home/u/.local/bin")
        ]
    );
    for (exe, tree) in cases {
        assert_eq!(
            installation(Path::new(exe), home),
            vec![PathBuf::from(tree)],
            "{exe}"
        );
    }
}
