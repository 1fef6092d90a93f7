//! What `merge` shows before it asks: every file the merge changes, however many (a list cut short
//! could hide one past the cut), escaped (the job chose the names: an escape sequence in one is
//! shown, never obeyed), and first, always, the ones that change what runs in the project: isolate's
//! own configuration, hooks, CI, editor and shell configuration that runs code.

use crate::controls;
use crate::words::plural;
use crate::worktree::cleanup::Recorded;
use crate::worktree::merge::{Change, Preview};

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
    let (first, rest): (Vec<&Change>, Vec<&Change>) = preview
        .changes
        .iter()
        .partition(|c| runs_code(&c.path).is_some());
    if !first.is_empty() {
        say!("  read these first: they change what runs in the project");
        for change in &first {
            let why = runs_code(&change.path).unwrap_or_default();
            say!(
                "  {} {}  ({why})",
                change.status,
                controls::name(&change.path)
            );
        }
        say!("  and {}:", plural(rest.len(), "other file", "other files"));
    }
    for change in &rest {
        say!("  {} {}", change.status, controls::name(&change.path));
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
    } else if under(&[".vscode", ".devcontainer", ".idea"]) || matches!(name, ".envrc" | ".env") {
        Some("run by an editor or the shell on entering the directory")
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
        ] {
            assert!(runs_code(path).is_some(), "{path}");
        }
        for path in [
            "README.md",
            "src/main.rs",
            "docs/github.md",
            "Cargo.toml",
            "a/.isolate.toml.bak",
        ] {
            assert!(runs_code(path).is_none(), "{path}");
        }
    }
}
