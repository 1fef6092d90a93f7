//! The filter drivers of a base that only jobs vouch for (docs/sandbox.md, "after the job").
//!
//! A checkout runs the user's `filter.<driver>.smudge` and `process` commands on every file the
//! tree's `.gitattributes` (or the user's attributes file) names, with the user's rights. On the
//! user's own history that is what `git worktree add` does. On a base reachable only from jobs'
//! branches (`--base isolate/<id>`, or the project checked out on one) the job chose the attributes
//! and the files a driver reads (`git lfs`'s smudge fetches from the `lfs.url` of a committed
//! `.lfsconfig`): so that checkout runs no attributes at all, the files a driver would have written
//! are withheld (removed again, so that the index no longer claims them), and the job's sandbox
//! writes them (`launch`: `git checkout-index` confined like the job) before anything else runs.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path};

use nix::errno::Errno;
use nix::fcntl::{openat, OFlag};
use nix::sys::stat::Mode;
use nix::unistd::{unlinkat, UnlinkatFlags};

use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;
use crate::sandbox::policy;
use crate::worktree::sandboxed;

/// What became of the files a base only jobs vouch for has its filters write.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Filtered {
    /// No file of the base names a filter driver (or the base is vouched for).
    #[default]
    Nothing,
    /// This many were written by their drivers, confined like the job.
    Written(usize),
    /// This many are as committed, unfiltered (an LFS pointer, say): their drivers failed in the
    /// sandbox, as `why` says.
    Unfiltered { files: usize, why: String },
}

/// The file in the new repository that names the withheld files for the checkout that writes them.
const LIST: &str = ".git/isolate-withheld";

/// Whether a project ref other than a job's (its branch, its base pin) reaches `base`. HEAD does
/// not count: a project checked out on a job's branch does not vouch for it. The branch the project
/// is on answers in-process when it is at base; else `rev-list` walks from base.
pub(super) fn vouched(project: &Project, base: &str) -> Result<bool> {
    // The branch the project is on, at base: a ref of the project's own reaches it.
    if let Some((branch, tip)) = project.head_ref() {
        let jobs = branch.starts_with("refs/heads/isolate/") || branch.starts_with("refs/isolate/");
        if tip == base && branch.starts_with("refs/") && !jobs {
            return Ok(true);
        }
    }
    let out = git::run(
        &project.git_dir,
        [
            "rev-list",
            "-n",
            "1",
            base,
            "--not",
            "--exclude=refs/heads/isolate/*",
            "--exclude=refs/isolate/*",
            "--glob=refs/*",
            "--",
        ],
    )?;
    Ok(out.stdout.is_empty())
}

/// The options that make a checkout apply no attributes at all: none from the tree (an empty tree
/// is their source), none from the user's attributes file. (`info/attributes` of the new
/// repository does not exist, and the system's file is turned off by the caller's environment.)
pub(super) fn no_attributes(object_format: &str) -> [String; 3] {
    let empty = match object_format {
        "sha256" => "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
        _ => "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    };
    [
        "-c".into(),
        "core.attributesFile=/dev/null".into(),
        format!("--attr-source={empty}"),
    ]
}

/// The tracked files of the new worktree at `path` that a filter driver would write, as the
/// checked-out `.gitattributes` and the user's attributes say, removed from the work tree so that
/// the sandbox writes them. Read with `check-attr`, which runs nothing.
pub(super) fn withhold(path: &Path) -> Result<Vec<OsString>> {
    let files = git::run(path, ["ls-files", "-z", "--cached"])?;
    let names: Vec<&[u8]> = files
        .stdout
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .collect();
    let filtered: Vec<OsString> = git::attributes::driven(path, &[], &names)?
        .into_iter()
        .map(OsString::from_vec)
        .collect();
    if filtered.is_empty() {
        return Ok(filtered);
    }
    let root = nix::fcntl::open(
        path,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::io("cannot open the worktree", path, e.into()))?;
    for rel in &filtered {
        let rel = Path::new(rel);
        unlink_beneath(&root, rel)
            .map_err(|e| Error::io("cannot withhold a filtered file", path.join(rel), e))?;
    }
    Ok(filtered)
}

/// Writes the `withheld` files into the new worktree at `path`: with their filter drivers, in a
/// sandbox of the job's policy `confined` (supervised, stopped with its whole tree), or as the user
/// asked with `--no-sandbox` (`None`), unconfined like the job. When the drivers fail confined, the
/// files are written as committed, with no attributes, confined too (the drivers ran on the job's
/// input and could write the repository: its config, `info/attributes`, index and list are no longer
/// isolate's), and the outcome says why.
pub(super) fn write_withheld(
    project: &Project,
    path: &Path,
    withheld: &[OsString],
    confined: Option<&policy::Loaded>,
) -> Result<Filtered> {
    if withheld.is_empty() {
        return Ok(Filtered::Nothing);
    }
    let list = path.join(LIST);
    let mut names = Vec::new();
    for name in withheld {
        names.extend_from_slice(name.as_encoded_bytes());
        names.push(0);
    }
    std::fs::write(&list, names).map_err(|e| Error::io("cannot write", &list, e))?;
    let files = withheld.len();
    let outcome = match confined {
        None => checkout_listed(path).map(|()| Filtered::Written(files)),
        Some(loaded) => write_confined(project, path, loaded, files),
    };
    let _ = std::fs::remove_file(&list);
    outcome
}

/// The listed files written with their drivers in the sandbox; when they fail, as committed (no
/// attributes) in the sandbox again. Never unconfined: after the drivers ran, nothing of the
/// repository is isolate's.
fn write_confined(
    project: &Project,
    path: &Path,
    loaded: &policy::Loaded,
    files: usize,
) -> Result<Filtered> {
    let Some(why) = checkout_confined(project, path, loaded, &[])? else {
        return Ok(Filtered::Written(files));
    };
    let neutral = no_attributes(&project.object_format);
    match checkout_confined(project, path, loaded, &neutral)? {
        None => Ok(Filtered::Unfiltered { files, why }),
        Some(again) => Err(Error::Sandbox(format!(
            "the filter drivers of {files} files failed in the sandbox ({why}), and writing \
             them as committed failed there too ({again})"
        ))),
    }
}

/// `git checkout` of the listed files in a sandbox of the job's policy, with `extra` options first:
/// `None` when it succeeded, else why not.
fn checkout_confined(
    project: &Project,
    path: &Path,
    loaded: &policy::Loaded,
    extra: &[String],
) -> Result<Option<String>> {
    let mut args: Vec<&str> = git::NO_HOOKS.to_vec();
    args.extend(extra.iter().map(String::as_str));
    args.extend(CHECKOUT_LISTED);
    let out = sandboxed::git(project, path, loaded, &args)?;
    Ok(match out.status {
        0 => None,
        status => Some(match out.stderr.lines().find(|l| !l.trim().is_empty()) {
            Some(line) => crate::controls::name(line.trim()),
            None => format!("git exited with status {status}"),
        }),
    })
}

/// `git checkout` of the listed files from the index, literal names, no submodules.
const CHECKOUT_LISTED: [&str; 7] = [
    "--literal-pathspecs",
    "-c",
    "submodule.recurse=false",
    "checkout",
    "--pathspec-from-file=.git/isolate-withheld",
    "--pathspec-file-nul",
    "--",
];

/// The listed files checked out unconfined, as the user's git would (`--no-sandbox`).
fn checkout_listed(path: &Path) -> Result<()> {
    let mut cmd = git::command(path);
    cmd.args(CHECKOUT_LISTED);
    git::run_command(cmd).map(|_| ())
}

/// Removes the regular file or link `rel` beneath `root`, never through a link; a path that is not
/// there (or not beneath) is left as it is.
fn unlink_beneath(root: &OwnedFd, rel: &Path) -> io::Result<()> {
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Ok(());
    };
    let mut dir = root.try_clone()?;
    for part in parent.components() {
        let Component::Normal(part) = part else {
            return Ok(());
        };
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        dir = match openat(dir.as_fd(), part, flags, Mode::empty()) {
            Ok(next) => next,
            Err(Errno::ENOENT | Errno::ELOOP | Errno::ENOTDIR) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
    }
    match unlinkat(dir.as_fd(), name, UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(Errno::ENOENT | Errno::EISDIR) => Ok(()),
        Err(e) => Err(e.into()),
    }
}
