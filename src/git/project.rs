//! The project: the user's repository, found from the current directory through git's common dir,
//! so that a job started inside a linked worktree of the project still belongs to the project.

use std::path::{Path, PathBuf};

use super::refs;
use crate::error::{Error, GitProblem, Result};
use crate::git;

#[derive(Debug, Clone)]
pub struct Project {
    /// The main checkout's top level (`ISOLATE_REPO`).
    pub top: PathBuf,
    /// The common git dir (`.git` of the main checkout).
    pub git_dir: PathBuf,
    /// Its object store, which job repositories borrow through `objects/info/alternates`.
    pub objects: PathBuf,
    /// Where its hooks are: the project's `core.hooksPath` (a relative one stays relative to the
    /// checkout the hooks run in), else `<git dir>/hooks`.
    pub hooks: PathBuf,
    /// `sha1` or `sha256`.
    pub object_format: String,
    /// The checkout the caller is in (the main one or a linked worktree).
    pub caller_top: PathBuf,
    /// The caller's directory relative to `caller_top` (`src/`), empty at the top.
    pub prefix: PathBuf,
}

impl Project {
    /// The repository of `cwd`.
    pub fn discover(cwd: &Path) -> Result<Project> {
        // git answers in lines: a newline in a path would move every field. Refused before git is
        // asked (the checkout's path is a prefix of the working directory's).
        let real = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        if real.as_os_str().as_encoded_bytes().contains(&b'\n') {
            return Err(Error::Usage(format!(
                "{:?} contains a newline; isolate does not support that in a project's path",
                real
            )));
        }
        // The hooks' place is asked beside the rest: two git processes at once, not one after the
        // other (its answer is used only if this is a repository).
        let (out, hooks) = std::thread::scope(|scope| {
            let hooks = scope.spawn(|| hooks_path(cwd));
            let out = rev_parse(cwd);
            (out, hooks.join())
        });
        let out = out?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            if stderr.contains("not a git repository") {
                return Err(Error::NotARepository(cwd.to_path_buf()));
            }
            return Err(Error::git("rev-parse", out.status.code(), &out.stderr));
        }
        let text = out.text();
        let lines: Vec<&str> = text.split('\n').collect();
        let [bare, common, top, objects, format, prefix @ ..] = lines.as_slice() else {
            return Err(Error::from(GitProblem::RevParseUnreadable {
                cwd: cwd.to_path_buf(),
            }));
        };
        if *bare == "true" {
            return Err(Error::Usage(format!(
                "{} is a bare repository; run isolate in a checkout",
                common
            )));
        }
        let git_dir = PathBuf::from(common);
        let hooks = hooks
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?
            .unwrap_or_else(|| git_dir.join("hooks"));
        let top_of_main = if git_dir.file_name().is_some_and(|n| n == ".git") {
            git_dir.parent().map(Path::to_path_buf)
        } else {
            None
        };
        Ok(Project {
            top: top_of_main.unwrap_or_else(|| PathBuf::from(top)),
            git_dir,
            objects: PathBuf::from(objects),
            hooks,
            object_format: format.to_string(),
            caller_top: PathBuf::from(top),
            prefix: PathBuf::from(prefix.first().copied().unwrap_or("")),
        })
    }

    /// Where the project's repository is kept: its git dir, its object store and every store that
    /// one borrows (a project that is itself a job's worktree borrows the real project's objects).
    pub fn stores(&self) -> Vec<PathBuf> {
        let mut stores = vec![self.git_dir.clone(), self.objects.clone()];
        stores.extend(git::borrowed(&self.objects));
        stores
    }

    /// The full commit id `rev` names in the project (HEAD read in-process when it can be).
    pub fn resolve_commit(&self, rev: &str) -> Result<Option<String>> {
        if rev == "HEAD" {
            if let Some(commit) = refs::head_commit(&self.top, &self.git_dir) {
                return Ok(Some(commit));
            }
        }
        let spec = format!("{rev}^{{commit}}");
        let out = git::try_run(
            &self.top,
            [
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &spec,
            ],
        )?;
        Ok(out.status.success().then(|| out.text()))
    }

    /// The values of full ref names, in one read (`None`: no such ref); in-process when it can be.
    pub fn refs<const N: usize>(&self, names: [&str; N]) -> Result<[Option<String>; N]> {
        if let Some(values) = refs::values(&self.top, &self.git_dir, names) {
            return Ok(values);
        }
        let mut args = vec!["for-each-ref", "--format=%(refname) %(objectname)", "--"];
        args.extend(names);
        let text = git::run(&self.top, &args)?.text();
        Ok(names.map(|name| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
                .map(str::to_string)
        }))
    }

    /// The branch the caller's checkout is on (`main`), `None` when HEAD is detached; in-process
    /// when it can be.
    pub fn current_branch(&self) -> Result<Option<String>> {
        if let Some(branch) = refs::head_branch(&self.caller_top, &self.git_dir) {
            return Ok(branch);
        }
        let out = git::try_run(
            &self.caller_top,
            ["symbolic-ref", "--quiet", "--short", "HEAD"],
        )?;
        Ok(out
            .status
            .success()
            .then(|| out.text())
            .filter(|b| !b.is_empty()))
    }

    /// The branch the main checkout's HEAD is on (full name) and the id it points at, read
    /// in-process; `None` when detached, unborn, or not readable so.
    pub fn head_ref(&self) -> Option<(String, String)> {
        refs::head_ref(&self.top, &self.git_dir)
    }

    /// `<basename>-<8 hex of the digest of the project's real path>`: the directory of its worktrees.
    pub fn key(&self) -> String {
        key_of(&self.top)
    }
}

/// `<basename>-<8 hex of the digest of the real path>` of a directory: a project's key (its
/// worktrees' and its jobs' caches' directory).
pub fn key_of(dir: &Path) -> String {
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(real.as_os_str().as_encoded_bytes());
    let digest = hasher
        .try_finalize()
        .map(|id| id.to_hex().to_string())
        .unwrap_or_else(|_| "00000000".into());
    let base = real
        .file_name()
        .map(|n| crate::words::slug(n.as_encoded_bytes()))
        .unwrap_or_else(|| "root".into());
    format!("{base}-{}", &digest[..8])
}

/// What the project is, in one `rev-parse`: bare or not, the common git dir, the top level, the
/// object store, the object format, the caller's prefix (a line each).
fn rev_parse(cwd: &Path) -> Result<git::Output> {
    git::try_run(
        cwd,
        [
            "rev-parse",
            "--path-format=absolute",
            "--is-bare-repository",
            "--git-common-dir",
            "--show-toplevel",
            "--git-path",
            "objects",
            "--show-object-format",
            "--show-prefix",
        ],
    )
}

/// The user's `core.hooksPath`, if any. isolate's own git calls override it with `/dev/null` on the
/// command line, so the value comes from the last setting of any other scope.
fn hooks_path(cwd: &Path) -> Result<Option<PathBuf>> {
    let out = git::try_run(
        cwd,
        ["config", "--show-scope", "--get-all", "core.hooksPath"],
    )?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .rfind(|(scope, _)| *scope != "command")
        .map(|(_, value)| PathBuf::from(value)))
}
