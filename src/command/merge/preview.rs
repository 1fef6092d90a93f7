//! What `merge` shows before it asks: every file the merge changes, however many (a list cut short
//! could hide one past the cut), escaped (the job chose the names: an escape sequence in one is
//! shown, never obeyed), and first, always, the ones that change what runs in the project: isolate's
//! own configuration, hooks (the fixed names and the project's own `core.hooksPath`), CI, editor and
//! shell configuration that runs code, and tool configuration that names a program the tool runs.

use std::path::Component;

use crate::controls;
use crate::git::project::Project;
use crate::words::plural;
use crate::worktree::cleanup::Recorded;
use crate::worktree::merge::{Change, Kind, Preview};

/// The job's own change, on stderr.
pub(super) fn show(recorded: &Recorded, preview: &Preview) {
    say!(
        "isolate: {} of {} onto {} ({}), changing {}:",
        plural(preview.commits, "commit", "commits"),
        recorded.id.branch(),
        preview.target,
        &preview.shown[..12.min(preview.shown.len())],
        plural(preview.changes.len(), "file", "files")
    );
    let hooks = hooks_in_tree(&recorded.project);
    let drivers = crate::worktree::merge::driver_files(&recorded.project);
    let why = |c: &Change| {
        runs_code(&c.path)
            .or_else(|| in_hooks(&c.path, hooks.as_deref()))
            .or_else(|| {
                drivers
                    .contains(&c.path)
                    .then_some("run by one of your git filter drivers")
            })
            .or_else(|| reaches_out(c))
    };
    let (first, rest): (Vec<&Change>, Vec<&Change>) =
        preview.changes.iter().partition(|c| why(c).is_some());
    if !first.is_empty() {
        say!("  read these first: they change what runs in the project");
        for change in &first {
            let why = why(change).unwrap_or_default();
            say!("  {}  ({why})", line(change));
        }
        say!("  and {}:", plural(rest.len(), "other file", "other files"));
    }
    for change in &rest {
        say!("  {}", line(change));
    }
    if preview.moved > 0 {
        say!(
            "isolate: {} has moved {} since the job's base {}",
            preview.target,
            plural(preview.moved, "commit", "commits"),
            &recorded.worktree.base[..12.min(recorded.worktree.base.len())]
        );
    }
}

/// A change as shown: its status and path, and what it is where that is not a plain file (a link
/// and where it points, a submodule and its commit, an executable), escaped.
fn line(change: &Change) -> String {
    let what = match (change.after, &change.target) {
        (Kind::Link, Some(target)) => format!(" -> {}", controls::name(target)),
        (Kind::Link, None) => " (a link whose target is over 4 KiB)".to_string(),
        (Kind::Submodule, _) => format!(
            " (a submodule, at commit {})",
            &change.object[..12.min(change.object.len())]
        ),
        (Kind::Executable, _) if change.before != Kind::Executable => " (executable)".into(),
        (Kind::Other(mode), _) => format!(" (mode {mode:o})"),
        _ => String::new(),
    };
    let was = match (change.status, change.before) {
        ('T', Kind::Link) => " (was a link)",
        ('T', Kind::Submodule) => " (was a submodule)",
        ('T', _) => " (was a file)",
        _ => "",
    };
    format!(
        "{} {}{what}{was}",
        change.status,
        controls::name(&change.path)
    )
}

/// Why a change reaches outside the files shown: a link out of the project (what is written
/// through it lands where it points), or a submodule's commit (what a submodule update checks out).
fn reaches_out(change: &Change) -> Option<&'static str> {
    match change.after {
        Kind::Submodule => Some("a submodule's commit: what `git submodule update` checks out"),
        Kind::Link => match &change.target {
            Some(target) if !leads_out(&change.path, target) => None,
            _ => Some("a link out of the project: what is written through it lands there"),
        },
        _ => None,
    }
}

/// Whether the link at `path` (in the project's tree) pointing to `target` leads out of the tree:
/// an absolute target, or one whose `..` climb above the top.
fn leads_out(path: &str, target: &str) -> bool {
    if target.starts_with('/') {
        return true;
    }
    let mut depth = path.matches('/').count() as i64;
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => depth -= 1,
            _ => depth += 1,
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

/// The project's `core.hooksPath` as a path of its work tree (`scripts/git-hooks`) when it lies
/// there: the hooks git runs on the user's next commit are then files a merge can change.
fn hooks_in_tree(project: &Project) -> Option<String> {
    let hooks = &project.hooks;
    let rel = if hooks.is_relative() {
        hooks.clone()
    } else {
        let top = std::fs::canonicalize(&project.top).ok()?;
        let real = std::fs::canonicalize(hooks).unwrap_or_else(|_| hooks.clone());
        real.strip_prefix(&top).ok()?.to_path_buf()
    };
    let mut parts = Vec::new();
    for part in rel.components() {
        match part {
            Component::Normal(name) => parts.push(name.to_string_lossy().into_owned()),
            Component::CurDir => {}
            // `../hooks`: outside the work tree, so no file of the merge.
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// `Some` for a path beneath the project's hooks directory `hooks` (a path of its work tree).
fn in_hooks(path: &str, hooks: Option<&str>) -> Option<&'static str> {
    let hooks = hooks?;
    path.strip_prefix(hooks)
        .is_some_and(|rest| rest.starts_with('/'))
        .then_some("git hooks: the project's core.hooksPath")
}

/// Why a changed path decides what runs in the project (and so must be read before a merge), or
/// `None` for an ordinary file.
pub(super) fn runs_code(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let top = path.split('/').next().unwrap_or(path);
    let under = |dirs: &[&str]| dirs.contains(&top);
    if path == ".isolate.toml" {
        Some("isolate's configuration: the policy, setup and included files of every job")
    } else if path == ".worktreeinclude" {
        Some("the files isolate copies into every new worktree")
    } else if name.ends_with(".toml") && (top == ".isolate" || name.contains("policy")) {
        Some("an isolate policy")
    } else if matches!(name, ".gitattributes" | ".gitmodules" | ".lfsconfig") {
        Some("git filters, attributes or submodules")
    } else if under(&[".githooks", ".husky", ".hooks"])
        || matches!(
            name,
            ".pre-commit-config.yaml" | "lefthook.yml" | ".lefthook.yml"
        )
    {
        Some("git hooks")
    } else if under(&[
        ".github",
        ".gitlab",
        ".circleci",
        ".buildkite",
        ".woodpecker",
        ".forgejo",
        ".gitea",
    ]) || matches!(
        path,
        ".gitlab-ci.yml"
            | ".travis.yml"
            | "Jenkinsfile"
            | "azure-pipelines.yml"
            | "bitbucket-pipelines.yml"
            | ".drone.yml"
            | "appveyor.yml"
    ) {
        Some("CI")
    } else if under(&[".vscode", ".devcontainer", ".idea"])
        || matches!(
            name,
            ".envrc"
                | ".env"
                | "mise.toml"
                | ".mise.toml"
                | "mise.local.toml"
                | ".mise.local.toml"
                | ".exrc"
                | ".vimrc"
                | ".nvimrc"
                | ".nvim.lua"
                | ".dir-locals.el"
                | ".dir-locals-2.el"
                | ".rvmrc"
                | ".tool-versions"
        )
        || path.starts_with(".mise/")
        || path.starts_with(".config/mise")
    {
        Some("run by an editor or the shell on entering the directory")
    } else if (path.split('/').any(|dir| dir == ".cargo")
        && matches!(name, "config" | "config.toml"))
        || matches!(name, ".npmrc" | ".yarnrc" | ".yarnrc.yml" | ".gitconfig")
    {
        Some("configuration of a tool that can name a program it runs")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::runs_code;

    #[test]
    fn what_decides_what_runs_is_told_from_ordinary_files() {
        for path in [
            ".isolate.toml",
            ".worktreeinclude",
            ".isolate/strict.toml",
            "config/policy.toml",
            ".gitattributes",
            "sub/.gitattributes",
            ".gitmodules",
            ".husky/pre-commit",
            ".pre-commit-config.yaml",
            ".github/workflows/ci.yml",
            ".gitlab-ci.yml",
            "Jenkinsfile",
            ".vscode/tasks.json",
            ".envrc",
            ".exrc",
            "sub/.nvim.lua",
            ".dir-locals.el",
            ".rvmrc",
            "mise.toml",
            "sub/.mise.toml",
            ".cargo/config.toml",
            "crates/a/.cargo/config",
            ".npmrc",
            ".yarnrc.yml",
            ".gitconfig",
        ] {
            assert!(runs_code(path).is_some(), "{path}");
        }
        for path in [
            "README.md",
            "src/main.rs",
            "docs/github.md",
            "Cargo.toml",
            "a/.isolate.toml.bak",
            "cargo/config.toml",
            "scripts/git-hooks/pre-commit",
        ] {
            assert!(runs_code(path).is_none(), "{path}");
        }
    }

    #[test]
    fn a_link_out_of_the_project_is_told_from_one_within() {
        use super::leads_out;
        for (path, target) in [
            ("cache", "/home/u/.ssh"),
            ("cache", ".."),
            ("a/b", "../../x"),
            ("a/b", "c/../../../x"),
        ] {
            assert!(leads_out(path, target), "{path} -> {target}");
        }
        for (path, target) in [("a", "b"), ("a/b", "../c"), ("a/b", "./c/../d"), ("x", ".")] {
            assert!(!leads_out(path, target), "{path} -> {target}");
        }
    }

    #[test]
    fn the_projects_hooks_path_is_told_apart() {
        use super::in_hooks;
        let hooks = Some("scripts/git-hooks");
        assert!(in_hooks("scripts/git-hooks/pre-commit", hooks).is_some());
        assert!(in_hooks("scripts/git-hooks-old/pre-commit", hooks).is_none());
        assert!(in_hooks("scripts/git-hooks/pre-commit", None).is_none());
    }
}
