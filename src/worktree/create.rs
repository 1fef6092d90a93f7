//! Creating a job's worktree (spec/worktrees.md, "Creation"): a fresh repository that borrows the
//! project's objects read-only, on branch `isolate/<id>` at base, checked out with parallel
//! checkout, configured to commit as the project does; the branch and a base pin in the project.
//! Everything made here is recorded in `Created`, whose `undo` removes exactly that and nothing else.

use std::fs;
use std::path::{Path, PathBuf};
use std::thread;

use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;
use crate::job::id::JobId;
use crate::worktree::include;

/// A worktree isolate has made, and the refs it made in the project.
#[derive(Debug)]
pub struct Created {
    pub path: PathBuf,
    pub branch: String,
    pub base: String,
    /// The project's checkout had uncommitted changes (they are not in the worktree).
    pub dispatch_dirty: bool,
    /// Files `.worktreeinclude` brought in.
    pub included: usize,
    /// The project's branch the job was started from (`merge` and `sync` bring it in).
    pub project_branch: Option<String>,
}

/// The base pin of a job: keeps a `git gc` in the project from pruning what the worktree borrows.
pub fn pin_ref(id: &JobId) -> String {
    format!("refs/isolate/{id}/base")
}

/// Creates the worktree of job `id` at `path` from commit `base`. `Ok(None)` when the id is taken
/// (its branch, pin or directory exists already): nothing was made, draw another.
/// `include`: the configured `.worktreeinclude` patterns, used when the project has no such file.
pub fn create(
    project: &Project,
    id: &JobId,
    path: &Path,
    base: &str,
    include: &[String],
) -> Result<Option<Created>> {
    let branch = id.branch();
    // The refs first: their creation is the atomic test that nobody else has this id in the project.
    if !project_refs(project, id, base)? {
        return Ok(None);
    }
    if let Err(e) = fs::create_dir(path) {
        delete_refs(project, id, base);
        return match e.kind() {
            std::io::ErrorKind::AlreadyExists => Ok(None),
            _ => Err(Error::io("cannot create the worktree", path, e)),
        };
    }
    // Whether the caller's checkout is dirty is only reported, so it runs beside the checkout.
    let status_dir = project.caller_top.clone();
    let dirty = thread::spawn(move || {
        git::try_run(
            &status_dir,
            [
                "status",
                "--porcelain",
                "--untracked-files=normal",
                "--ignore-submodules",
            ],
        )
        .map(|out| out.status.success() && !out.stdout.is_empty())
        .unwrap_or(false)
    });
    let filled = init(project, id, path)
        .and_then(|()| checkout(path, &branch, base))
        .and_then(|()| include::copy(project, path, include));
    let dispatch_dirty = dirty.join().unwrap_or(false);
    match filled {
        Ok(included) => Ok(Some(Created {
            path: path.to_path_buf(),
            branch,
            base: base.to_string(),
            dispatch_dirty,
            included,
            project_branch: None,
        })),
        Err(e) => {
            undo(project, id, path, base);
            Err(e)
        }
    }
}

/// Makes the worktree of job `id` again at `path` (which must not exist), after isolate removed it:
/// a fresh repository borrowing the project's objects, on the job's branch (unborn: the caller
/// checks out the branch's tip, in the sandbox, as the tree is the job's), and the base pin again.
/// The project's branch of the job is left as it is.
pub fn recreate(project: &Project, id: &JobId, path: &Path, base: &str) -> Result<()> {
    let pin = pin_ref(id);
    let current = git::try_run(
        &project.top,
        ["rev-parse", "--verify", "--quiet", "--end-of-options", &pin],
    )?;
    if !current.status.success() {
        git::run(
            &project.top,
            ["update-ref", "--end-of-options", &pin, base, ""],
        )?;
    } else if current.text() != base {
        return Err(Error::Refused(format!(
            "the project's {pin} is {}, not the job's base {base}; nothing made",
            current.text()
        )));
    }
    fs::create_dir(path).map_err(|e| Error::io("cannot create the worktree", path, e))?;
    if let Err(e) = init(project, id, path) {
        let _ = fs::remove_dir_all(path);
        return Err(e);
    }
    Ok(())
}

/// Removes what `create` made for job `id`: the directory (made fresh and at base, so nothing of the
/// user's is in it) and the two refs, each only if it still points at base.
pub fn undo(project: &Project, id: &JobId, path: &Path, base: &str) {
    let _ = fs::remove_dir_all(path);
    delete_refs(project, id, base);
}

/// Deletes the job's branch and pin in the project, each only if it still points at `base`.
fn delete_refs(project: &Project, id: &JobId, base: &str) {
    let branch = format!("refs/heads/{}", id.branch());
    for reference in [branch, pin_ref(id)] {
        let _ = git::run(
            &project.top,
            ["update-ref", "-d", "--end-of-options", &reference, base],
        );
    }
}

/// `refs/heads/isolate/<id>` and the base pin, created together in one transaction. `false` when
/// either exists already.
fn project_refs(project: &Project, id: &JobId, base: &str) -> Result<bool> {
    let stdin = format!(
        "create refs/heads/{} {base}\ncreate {} {base}\n",
        id.branch(),
        pin_ref(id)
    );
    let out = git::try_run_with_input(&project.top, ["update-ref", "--stdin"], stdin.as_bytes())?;
    if out.status.success() {
        return Ok(true);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("already exists") {
        return Ok(false);
    }
    Err(Error::git(
        "update-ref --stdin (the job's branch and base pin)",
        out.status.code(),
        &out.stderr,
    ))
}

/// `git init`, then the alternates and the configuration that make the job commit as the project.
fn init(project: &Project, id: &JobId, path: &Path) -> Result<()> {
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
    // the project's hooks (run by the job's git, so inside the sandbox), a remote named after the
    // project, and no automatic gc (its detached process would outlive the job).
    let config = format!(
        "[include]\n\tpath = {}\n[core]\n\thooksPath = {}\n[remote \"project\"]\n\turl = {}\n\
         \tfetch = +refs/heads/*:refs/remotes/project/*\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n\
         [isolate]\n\tjob = {id}\n",
        quote(&project.git_dir.join("config")),
        quote(&project.hooks),
        quote(&project.top),
    );
    let config_path = git_dir.join("config");
    let mut text =
        fs::read_to_string(&config_path).map_err(|e| Error::io("cannot read", &config_path, e))?;
    text.push_str(&config);
    fs::write(&config_path, text).map_err(|e| Error::io("cannot write", &config_path, e))?;

    // The project's own ignore rules, so that the job's repository ignores what the project ignores.
    let exclude = project.git_dir.join("info/exclude");
    if exclude.is_file() {
        let target = git_dir.join("info");
        fs::create_dir_all(&target).map_err(|e| Error::io("cannot create", &target, e))?;
        fs::copy(&exclude, target.join("exclude"))
            .map_err(|e| Error::io("cannot copy", &exclude, e))?;
    }
    Ok(())
}

/// Checks out `base` on `branch` with parallel checkout (one worker per core).
fn checkout(path: &Path, branch: &str, base: &str) -> Result<()> {
    git::run(
        path,
        [
            "-c",
            "checkout.workers=0",
            "-c",
            "advice.detachedHead=false",
            "checkout",
            "--quiet",
            "--force",
            "-B",
            branch,
            base,
            "--",
        ],
    )
    .map(|_| ())
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
