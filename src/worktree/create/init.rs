//! The job's repository made: `git init`, the alternates that borrow the project's objects, and the
//! configuration that makes the job commit as the project does. Never writes to the project.

use std::fs;
use std::path::Path;

use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;
use crate::job::id::JobId;
use crate::sandbox::policy::IgnoreRule;

/// `git init`, then the alternates and the configuration that make the job commit as the project;
/// the job ignores what the project ignores, and what its policy adds (`ignore`).
pub(super) fn init(
    project: &Project,
    id: &JobId,
    path: &Path,
    ignore: &[IgnoreRule],
) -> Result<()> {
    let format = format!("--object-format={}", project.object_format);
    let initial = format!("--initial-branch={}", id.branch());
    git::run(
        path,
        [
            "init",
            "--quiet",
            "--template=",
            &format,
            &initial,
            "--",
            ".",
        ],
    )?;
    let git_dir = path.join(".git");
    let info = git_dir.join("objects/info");
    fs::create_dir_all(&info).map_err(|e| Error::io("cannot create", &info, e))?;
    let alternates = info.join("alternates");
    let objects = project.objects.to_string_lossy();
    fs::write(&alternates, format!("{objects}\n"))
        .map_err(|e| Error::io("cannot write", &alternates, e))?;

    // The project's config first (identity, commit settings, its remotes), then what must differ:
    // the identity git resolves in the project (the user's global one, or the one a conditional
    // include picks for the project's path, which the worktree's path would not), so that a tool
    // that hides the global configuration from its commands (Gemini CLI's shell) still commits as
    // the user; the project's hooks (run by the job's git, so inside the sandbox), a remote named
    // after the project, and no automatic gc (its detached process would outlive the job).
    let config = format!(
        "[include]\n\tpath = {}\n{}[core]\n\thooksPath = {}\n[remote \"project\"]\n\turl = {}\n\
         \tfetch = +refs/heads/*:refs/remotes/project/*\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n\
         {mark}\n\tjob = {id}\n",
        quote(&project.git_dir.join("config")),
        identity(project),
        quote(&project.hooks),
        quote(&project.top),
        mark = git::mark::SECTION,
    );
    let config_path = git_dir.join("config");
    let mut text =
        fs::read_to_string(&config_path).map_err(|e| Error::io("cannot read", &config_path, e))?;
    text.push_str(&config);
    fs::write(&config_path, text).map_err(|e| Error::io("cannot write", &config_path, e))?;

    // The project's own ignore rules, so that the job's repository ignores what the project ignores;
    // then the policy's (an agent's files), on lines of their own.
    let exclude = project.git_dir.join("info/exclude");
    let target = git_dir.join("info");
    if exclude.is_file() || !ignore.is_empty() {
        fs::create_dir_all(&target).map_err(|e| Error::io("cannot create", &target, e))?;
    }
    if exclude.is_file() {
        fs::copy(&exclude, target.join("exclude"))
            .map_err(|e| Error::io("cannot copy", &exclude, e))?;
    }
    if !ignore.is_empty() {
        let path = target.join("exclude");
        let mut text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(Error::io("cannot read", &path, e)),
        };
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("# The job's policy ([worktree] ignore):\n");
        text.push_str(&crate::worktree::policy_ignores::lines(ignore));
        fs::write(&path, text).map_err(|e| Error::io("cannot write", &path, e))?;
    }
    Ok(())
}

/// The `[user]` section of the identity git resolves in the project (`user.name`, `user.email`,
/// each its last value), empty when it has none.
fn identity(project: &Project) -> String {
    let Ok(out) = git::try_run(
        &project.top,
        ["config", "-z", "--get-regexp", "^user\\.(name|email)$"],
    ) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut name = None;
    let mut email = None;
    // `-z`: each entry its key, a newline, its value, then a NUL (a value may hold newlines).
    for entry in text.split('\0') {
        match entry.split_once('\n') {
            Some(("user.name", value)) => name = Some(value),
            Some(("user.email", value)) => email = Some(value),
            _ => {}
        }
    }
    if name.is_none() && email.is_none() {
        return String::new();
    }
    let mut section = String::from("[user]\n");
    for (key, value) in [("name", name), ("email", email)] {
        if let Some(value) = value {
            section.push_str(&format!("\t{key} = {}\n", quote(Path::new(value))));
        }
    }
    section
}

/// A git config value in double quotes, with `\` and `"` escaped and newlines written as `\n`.
fn quote(path: &Path) -> String {
    let mut out = String::from("\"");
    for c in path.to_string_lossy().chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
