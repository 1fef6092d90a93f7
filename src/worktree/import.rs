//! The import (docs/sandbox.md): the job's commits reach the project without git ever running in the
//! job's repository. From the project, `pack-objects --revs --thin` reads the job's object directory
//! as an extra alternate and `index-pack --stdin --fix-thin --strict` recomputes every object id
//! into the project's store, refusing any object `git fsck` would (a zero-padded mode, a committer
//! without an email, a duplicate tree entry: `hash-object --literally` writes them). It goes into the
//! project's store; the tip is validated (a full id, a commit, present) and everything it reaches is
//! checked to be in the project's own store (`rev-list --objects --missing=error`: the job can forge
//! an object file, which index-pack stores under its real id, leaving the name it was read by
//! missing) before `update-ref refs/heads/isolate/<id> <tip> <old>` moves the branch only if nobody
//! else did.
//!
//! The checks of what was copied are check.rs, what the sandboxed reader may read reader.rs.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Stdio;

use crate::error::{Error, ImportBound, Result};
use crate::git;
use crate::git::project::Project;
use crate::supervise::helper::Helper;
use crate::supervise::spawn;

mod check;
mod leftovers;
mod progress;
mod reader;

use crate::git::bounds::{bounds, exceeded, hold, memory_config, Bounds};
use check::{connected, is_null};
use reader::{reader_argv, reader_env, reader_rules};

pub use check::count;

/// What an import did.
pub struct Imported {
    /// Commits of `base..tip` in the project.
    pub commits: usize,
    /// Objects were copied into the project (the branch moved).
    pub copied: bool,
}

/// Imports `tip` (read from the job's repository) onto the project's `branch`, which must still be at
/// `old` (the null id: must not exist).
pub fn import(
    project: &Project,
    job_objects: &Path,
    branch: &str,
    tip: &str,
    old: &str,
    base: &str,
) -> Result<Imported> {
    let hex_len = if project.object_format == "sha256" {
        64
    } else {
        40
    };
    let full_id =
        |s: &str| s.len() == hex_len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !full_id(tip) {
        return Err(Error::TipNotAnId {
            tip: tip.to_string(),
        });
    }
    if tip != old {
        copy_objects(project, job_objects, tip, old)?;
        let kind = git::run(&project.top, ["cat-file", "-t", "--end-of-options", tip])?.text();
        if kind != "commit" {
            return Err(Error::TipNotACommit {
                tip: tip.to_string(),
                kind,
            });
        }
        connected(
            project,
            tip,
            if full_id(old) && !is_null(old) {
                old
            } else {
                base
            },
        )?;
        let reference = format!("refs/heads/{branch}");
        git::run(
            &project.top,
            [
                "update-ref",
                "-m",
                "isolate: import",
                "--end-of-options",
                &reference,
                tip,
                old,
            ],
        )?;
    }
    Ok(Imported {
        commits: count(project, base, tip)?,
        copied: tip != old,
    })
}

/// `pack-objects | index-pack` in the project, with the job's objects as an extra alternate for the
/// reading side only. The reading side runs in a Landlock sandbox that may read the system, the
/// project and the job's object directory and nothing else: the job writes that directory
/// (`info/alternates`, symlinks in place of object directories), and without the sandbox git would
/// follow what it planted there and copy objects the job itself could not read (found by the
/// escape suite: `escapes::the_import_never_copies_objects_the_policy_hides_from_the_job`).
fn copy_objects(project: &Project, job_objects: &Path, tip: &str, old: &str) -> Result<()> {
    let pipe = || crate::sys::pipe::pipe().map_err(|e| Error::System("cannot create a pipe", e));
    let (revs_read, revs_write) = pipe()?;
    let (pack_read, pack_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    let tmp = tempfile::Builder::new()
        .prefix("isolate-import-")
        .tempdir()
        .map_err(|e| Error::System("cannot create a temporary directory", e))?;
    let bounds = bounds()?;
    let env = reader_env(job_objects, tmp.path());
    let top = project.top.display().to_string();
    let packer = Helper::start(
        spawn::Spawn {
            argv: reader_argv(&top, bounds.memory),
            cwd: project.top.clone(),
            env,
            rules: reader_rules(project, job_objects, tmp.path(), bounds.memory),
            stdin: spawn::Stdio::from(revs_read),
            stdout: spawn::Stdio::from(pack_write),
            stderr: spawn::Stdio::from(err_write),
            cgroup_procs: None,
            limit_procs: Vec::new(),
            terminal: None,
        },
        "import",
    )?;
    let revs = if old.bytes().all(|b| b == b'0') {
        format!("{tip}\n")
    } else {
        format!("{tip}\n^{old}\n")
    };
    {
        // A short list of revisions: pack-objects reads it all before it writes anything.
        let mut w = std::fs::File::from(revs_write);
        let _ = w.write_all(revs.as_bytes());
    }
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::fs::File::from(err_read).read_to_string(&mut text);
        text
    });
    let before = leftovers::Before::take(&project.objects);
    let mut index = indexer(project, bounds);
    index
        .stdin(Stdio::from(pack_read))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = index.spawn();
    // The pack's read end is index-pack's alone now: when it stops reading (over the size bound),
    // the packer's writes fail instead of waiting for a reader that is gone.
    index.stdin(Stdio::null());
    let indexed = child.map(|mut child| {
        // Its messages are read for the bounds; on a terminal, its progress of a large import shows.
        let shown = child.stderr.take().map(progress::tee);
        let mut out = git::collect(&mut child, &index, git::TIMEOUT);
        if let (Ok(out), Some(shown)) = (out.as_mut(), shown) {
            out.stderr = shown.join().unwrap_or_default();
        }
        out
    });
    // index-pack first: it is this process's child too, and what is left of this process's children
    // once it has been waited for is the packer's tree, which `finish` stops whole.
    let packed = packer.finish(git::TIMEOUT);
    let pack_errors = errors.join().unwrap_or_default();
    let judged = judge(&index, indexed, (packed, &pack_errors), bounds);
    if judged.is_err() {
        // A refused pack stays out of the project whole: no partial pack of up to the bound.
        before.remove_new(std::time::SystemTime::now());
    }
    judged
}

/// What became of the copy: a bound that stopped either side is named; else the packer's failure,
/// then index-pack's.
fn judge(
    index: &std::process::Command,
    indexed: std::io::Result<Result<git::Output>>,
    (packed, pack_errors): (i32, &str),
    bounds: Bounds,
) -> Result<()> {
    let indexed = indexed.map_err(|e| Error::Git {
        args: git::describe(index),
        code: None,
        stderr: format!("cannot start git: {e}"),
    })??;
    // A bound that stopped either side says why both failed (the other side saw a closed pipe).
    let index_errors = String::from_utf8_lossy(&indexed.stderr);
    let stopped = [
        (indexed.status.success(), &*index_errors),
        (packed == 0, pack_errors),
    ]
    .into_iter()
    .find_map(|(ok, said)| exceeded(said).filter(|_| !ok));
    if let Some(bound) = stopped {
        return Err(over(bound, bounds));
    }
    if packed != 0 {
        return Err(Error::git(
            "pack-objects (sandboxed, reading the job's objects)",
            Some(packed),
            pack_errors.as_bytes(),
        ));
    }
    git::checked(index, indexed)?;
    Ok(())
}

/// `index-pack` in the project, with the pack's size and its own memory bounded: what it is fed
/// was made from the job's objects (a few KiB of deltas can name gigabytes).
fn indexer(project: &Project, bounds: Bounds) -> std::process::Command {
    let mut index = git::command(&project.top);
    index.args(memory_config(bounds.memory)).args([
        "index-pack",
        "--stdin",
        "--fix-thin",
        "--strict",
        &format!("--max-input-size={}", bounds.size),
    ]);
    if crate::sys::progress::wanted() {
        index.arg("-v");
    }
    hold(&mut index, bounds, false);
    index
}

/// The error of an import that went over `bound`.
fn over(bound: ImportBound, bounds: Bounds) -> Error {
    let (limit, var) = bounds.of(bound);
    Error::ImportOverBound { bound, limit, var }
}
