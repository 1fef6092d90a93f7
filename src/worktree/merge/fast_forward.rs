//! The project's checkout of the project branch fast-forwarded to the merge, only where nothing of
//! the user's is in the way, and put back if git fails part-way. Never over the user's changes,
//! never through a link, never with attributes the job chose, never over configuration the user's
//! programs would read (configuration.rs).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::beneath::{in_the_way, open_top, present, remove_added};
use super::configuration::read_as_configuration;
use super::drivers::driver_files;
use super::plan::{Change, Kind, Preview};
use super::read::{changes, rev, sizes};
use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;

/// The longest file name (`NAME_MAX`) and path (`PATH_MAX`) a checkout can hold.
const NAME_MAX: usize = 255;
const PATH_MAX: usize = 4096;

/// The checkout `dir` of the project branch, fast-forwarded from `preview.shown` to `result`: only
/// if nothing of the user's is where the merge writes (no change of theirs, no link, file or
/// repository of their own where a path's directory goes), and every name fits the filesystem
/// (git would fail part-way and leave the checkout half-merged). The checkout applies the
/// attributes of the commit shown, the user's, not those the job's change brings (which would
/// choose the user's filter drivers for files the job chose). If git fails all the same, the files
/// the merge touched are put back as they were at `preview.shown`.
pub(super) fn fast_forward(
    project: &Project,
    dir: &Path,
    preview: &Preview,
    result: &str,
    target_ref: &str,
) -> Result<()> {
    let involved = changes(project, &preview.shown, result)?;
    let refused = |why: String| Error::CheckoutRefused {
        why,
        target: preview.target.clone(),
        checkout: dir.to_path_buf(),
    };
    let top_len = dir.as_os_str().len() + 1;
    if let Some(long) = involved.iter().find(|c| {
        top_len + c.name.len() >= PATH_MAX
            || c.name
                .split(|&b| b == b'/')
                .any(|part| part.len() > NAME_MAX)
    }) {
        return Err(refused(format!(
            "{} is a name longer than a checkout can hold",
            crate::controls::name(&long.path)
        )));
    }
    let cannot_look = |e: std::io::Error| Error::io("cannot look at the checkout", dir, e);
    let top = open_top(dir).map_err(cannot_look)?;
    for change in &involved {
        if let Some(obstacle) = in_the_way(&top, &change.name).map_err(cannot_look)? {
            return Err(refused(obstacle.to_string()));
        }
    }
    // `:(literal)`: a name the job chose is a path, never pathspec magic.
    let literal: Vec<Vec<u8>> = involved
        .iter()
        .map(|c| [b":(literal)".as_slice(), &c.name].concat())
        .collect();
    let mut args: Vec<&OsStr> = [
        "status",
        "--porcelain",
        "--untracked-files=all",
        "--ignored=matching",
        "--ignore-submodules=none",
        "--",
    ]
    .iter()
    .map(OsStr::new)
    .collect();
    args.extend(literal.iter().map(|l| OsStr::from_bytes(l)));
    let dirty = git::run(dir, &args)?.text();
    if !dirty.is_empty() {
        let shown: Vec<String> = dirty.lines().map(crate::controls::name).collect();
        return Err(refused(format!(
            "the checkout has changes of its own (uncommitted, untracked or ignored) where the merge writes:\n{}",
            shown.join("\n")
        )));
    }
    // Files git's status does not look at (`update-index --assume-unchanged` or `--skip-worktree`,
    // and every file `git add` records under `core.ignoreStat`): an edit of the user's there is
    // invisible to the look above, and the checkout below, or the putting back after a failed
    // one, would write over it.
    let mut listed: Vec<&OsStr> = ["ls-files", "-v", "-z", "--"]
        .iter()
        .map(OsStr::new)
        .collect();
    listed.extend(literal.iter().map(|l| OsStr::from_bytes(l)));
    let entries = git::run(dir, &listed)?.stdout;
    let unwatched: Vec<String> = entries
        .split(|&b| b == 0)
        .filter(|e| {
            e.first()
                .is_some_and(|&tag| tag.is_ascii_lowercase() || tag == b'S')
        })
        .map(|e| crate::controls::name(&String::from_utf8_lossy(e.get(2..).unwrap_or_default())))
        .collect();
    if !unwatched.is_empty() {
        return Err(refused(format!(
            "the checkout's index says git does not look at these files where the merge writes \
             (--assume-unchanged, --skip-worktree or core.ignoreStat), so changes of yours there \
             cannot be seen: clear that (git update-index --no-assume-unchanged \
             --no-skip-worktree), then merge:\n{}",
            unwatched.join("\n")
        )));
    }
    // What is there before the merge is never removed after it.
    let mut added = Vec::new();
    for change in involved.iter().filter(|c| c.before == Kind::Absent) {
        if !present(&top, &change.name).map_err(cannot_look)? {
            added.push(change);
        }
    }
    within_bounds(project, dir, &involved).map_err(refused)?;
    let attributes = attributes(&involved, preview).map_err(refused)?;
    read_as_configuration(dir, &involved).map_err(refused)?;
    if rev(project, target_ref)? != preview.shown {
        return Err(refused(format!(
            "{} moved since the preview",
            preview.target
        )));
    }
    // The files a driver of the user's writes, first: a driver's command may run what lies in the
    // checkout (`sh bin/smudge.sh`, `python3 -m tool` finding `tool.py` at the top), and git writes
    // in the index's order, so the job's other files would be there before a later file's driver
    // runs. Then the rest, where git finds those already written.
    let written: Vec<&[u8]> = involved
        .iter()
        .filter(|c| c.after != Kind::Absent)
        .map(|c| c.name.as_slice())
        .collect();
    let driven = git::attributes::driven(dir, &attributes, &written)?;
    // A file a driver's command runs that a driver also writes: checked out with the others, the
    // job's version of it would be on disk when the driver runs for the next one.
    let run_by_drivers = driver_files(project);
    if let Some(name) = driven
        .iter()
        .find(|n| run_by_drivers.iter().any(|f| f.as_bytes() == n.as_slice()))
    {
        return Err(refused(format!(
            "the merge changes {}, which a filter driver of yours runs and writes, so the \
             checkout would run the job's version of it (read it, then merge by hand)",
            crate::controls::name(&String::from_utf8_lossy(name))
        )));
    }
    let failed = match checkout_driven(dir, &attributes, result, &driven)? {
        Some(failed) => Some(failed),
        None => {
            // --no-overwrite-ignore: an ignored file or directory in the way (a `.env`, `data/`)
            // stops the merge rather than go.
            let mut merge: Vec<&str> = attributes.iter().map(String::as_str).collect();
            merge.extend([
                "merge",
                "--ff-only",
                "--quiet",
                "--no-overwrite-ignore",
                result,
            ]);
            let merged = git::try_run(dir, &merge)?;
            (!merged.status.success()).then_some(merged)
        }
    };
    let Some(failed) = failed else {
        return Ok(());
    };
    restore(
        project,
        dir,
        &top,
        (&attributes, preview),
        (&involved, &added, &driven),
    );
    Err(Error::git(
        "merge --ff-only (in the project's checkout, which is put back as it was)",
        failed.status.code(),
        &failed.stderr,
    ))
}

/// The most the files a merge writes may hold together. A blob a thousand times its packed size
/// (a run of one byte, compressed) passes the import's bounds; the checkout would fill the user's
/// memory while converting it and the disk while writing it. A change this large is the user's to
/// check out by hand, once reviewed.
const MAX_WRITTEN: u64 = 1 << 30;

/// Whether the files the merge writes fit `MAX_WRITTEN` and the checkout's free space and inodes
/// (a checkout that fills the disk fails part-way); why not. Each file counts as the blocks it
/// takes, one at least: sixty thousand files of one byte are one blob of one byte, and 240 MB.
fn within_bounds(
    project: &Project,
    dir: &Path,
    involved: &[Change],
) -> std::result::Result<(), String> {
    let ids: Vec<&str> = involved
        .iter()
        .filter(|c| matches!(c.after, Kind::File | Kind::Executable))
        .map(|c| c.object.as_str())
        .collect();
    let sizes = sizes(project, &ids).map_err(|e| e.to_string())?;
    let fs = nix::sys::statvfs::statvfs(dir)
        .map_err(|e| format!("cannot read the checkout's free space: {e}"))?;
    // (`fsblkcnt_t` and `fsfilcnt_t` are 32 bits wide on some targets.)
    #[allow(clippy::useless_conversion)]
    let (free, inodes) = (
        u64::from(fs.blocks_available()).saturating_mul(fs.fragment_size()),
        u64::from(fs.files_available()),
    );
    let block = fs.fragment_size().max(1);
    let total = sizes
        .iter()
        .map(|s| s.unwrap_or(0).div_ceil(block).max(1).saturating_mul(block))
        .fold(0u64, u64::saturating_add);
    let mib = |n: u64| n.div_ceil(1 << 20);
    if total > MAX_WRITTEN {
        return Err(format!(
            "the merge writes {} MiB of files, more than the {} MiB isolate checks out (see \
             their sizes with git diff --stat, then merge by hand)",
            mib(total),
            mib(MAX_WRITTEN)
        ));
    }
    if total > free {
        return Err(format!(
            "the merge writes {} MiB of files, and the checkout's filesystem has {} MiB free",
            mib(total),
            mib(free)
        ));
    }
    // A filesystem that counts no inodes (btrfs) says 0 of them.
    let added = involved.iter().filter(|c| c.before == Kind::Absent).count() as u64;
    if fs.files() > 0 && added > inodes {
        return Err(format!(
            "the merge adds {added} files, and the checkout's filesystem has room for {inodes}"
        ));
    }
    Ok(())
}

/// The files of `driven` checked out of `result`, into the index and the checkout, before any
/// other file of the merge is written; git's output when that failed.
fn checkout_driven(
    dir: &Path,
    attributes: &[String],
    result: &str,
    driven: &[Vec<u8>],
) -> Result<Option<git::Output>> {
    if driven.is_empty() {
        return Ok(None);
    }
    let names: Vec<&[u8]> = driven.iter().map(Vec::as_slice).collect();
    let out = checkout_paths(dir, attributes, result, &names)?;
    Ok((!out.status.success()).then_some(out))
}

/// `git checkout COMMIT -- NAMES…` in `dir` with `attributes` first, each name literal (a name the
/// job chose is a path, never pathspec magic).
fn checkout_paths(
    dir: &Path,
    attributes: &[String],
    commit: &str,
    names: &[&[u8]],
) -> Result<git::Output> {
    let mut args: Vec<Vec<u8>> = attributes
        .iter()
        .map(String::as_str)
        .chain(["checkout", "--quiet", commit, "--"])
        .map(|a| a.as_bytes().to_vec())
        .collect();
    args.extend(names.iter().map(|n| [b":(literal)".as_slice(), n].concat()));
    git::try_run(dir, args.iter().map(|a| OsStr::from_bytes(a)))
}

/// After a fast-forward that failed part-way: the files the merge touched as they were at the
/// commit shown. Those it added, where nothing was before, are removed again, and only where what
/// is there is what the merge writes. The files a driver writes (`driven`) go back last, once none
/// of the job's others is left for their drivers to run.
fn restore(
    project: &Project,
    dir: &Path,
    top: &std::os::fd::OwnedFd,
    (attributes, preview): (&[String], &Preview),
    (involved, added, driven): (&[Change], &[&Change], &[Vec<u8>]),
) {
    let checkout = |names: Vec<&[u8]>| {
        if !names.is_empty() {
            let _ = checkout_paths(dir, attributes, &preview.shown, &names);
        }
    };
    let existed = || involved.iter().filter(|c| c.before != Kind::Absent);
    let is_driven = |c: &Change| driven.contains(&c.name);
    checkout(
        existed()
            .filter(|c| !is_driven(c))
            .map(|c| c.name.as_slice())
            .collect(),
    );
    let ids: Vec<&str> = added.iter().map(|c| c.object.as_str()).collect();
    let sizes = sizes(project, &ids).unwrap_or_default();
    for (n, change) in added.iter().enumerate() {
        let _ = remove_added(
            top,
            &change.name,
            change.after,
            sizes.get(n).copied().flatten(),
        );
    }
    checkout(
        existed()
            .filter(|c| is_driven(c))
            .map(|c| c.name.as_slice())
            .collect(),
    );
}

/// The option that makes the checkout apply the attributes of the commit shown (git 2.40's
/// `--attr-source`). Before 2.40, none is needed unless the merge changes a `.gitattributes`:
/// then the checkout is refused, why given.
fn attributes(involved: &[Change], preview: &Preview) -> std::result::Result<Vec<String>, String> {
    if git::version().is_ok_and(|(major, minor, _)| (major, minor) >= (2, 40)) {
        return Ok(vec![format!("--attr-source={}", preview.shown)]);
    }
    let name = |c: &&Change| c.name.rsplit(|&b| b == b'/').next() == Some(b".gitattributes");
    match involved.iter().find(name) {
        Some(change) => Err(format!(
            "the merge changes {}, and a checkout before git 2.40 would apply it to the files it \
             writes (and run your filter drivers on the files it chose)",
            crate::controls::name(&change.path)
        )),
        None => Ok(Vec::new()),
    }
}
