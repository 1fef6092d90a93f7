//! The import (spec/sandbox.md): the job's commits reach the project without git ever running in the
//! job's repository. From the project, `pack-objects --revs --thin` reads the job's object directory
//! as an extra alternate and `index-pack --stdin --fix-thin` recomputes every object id into the
//! project's store; the tip is validated (a full id, a commit, present) before
//! `update-ref refs/heads/isolate/<id> <tip> <old>` moves the branch only if nobody else did.

use std::path::Path;
use std::process::Stdio;

use crate::error::{Error, Result};
use crate::git;
use crate::worktree::project::Project;

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
        return Err(Error::Refused(format!(
            "the job's branch tip {tip:?} is not a full object id; nothing imported"
        )));
    }
    if tip != old {
        copy_objects(project, job_objects, tip, old)?;
        let kind = git::run(&project.top, ["cat-file", "-t", "--end-of-options", tip])?.text();
        if kind != "commit" {
            return Err(Error::Refused(format!(
                "the job's branch tip {tip} is a {kind}, not a commit; nothing imported"
            )));
        }
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

/// Commits of `base..tip` in the project (no git call when they are the same commit).
pub fn count(project: &Project, base: &str, tip: &str) -> Result<usize> {
    if base == tip {
        return Ok(0);
    }
    let range = format!("{base}..{tip}");
    let count = git::run(
        &project.top,
        ["rev-list", "--count", "--end-of-options", &range],
    )?
    .text();
    count
        .parse()
        .map_err(|_| Error::Other(format!("git rev-list --count printed {count:?}")))
}

/// `pack-objects | index-pack` in the project, with the job's objects as an extra alternate for the
/// reading side only.
fn copy_objects(project: &Project, job_objects: &Path, tip: &str, old: &str) -> Result<()> {
    let mut pack = git::command(&project.top);
    pack.args(["pack-objects", "--revs", "--thin", "--stdout", "--quiet"])
        .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", job_objects)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let spawn_failed = |cmd: &std::process::Command, e: std::io::Error| Error::Git {
        args: git::describe(cmd),
        code: None,
        stderr: format!("cannot start git: {e}"),
    };
    let mut packer = pack.spawn().map_err(|e| spawn_failed(&pack, e))?;
    let revs = if old.bytes().all(|b| b == b'0') {
        format!("{tip}\n")
    } else {
        format!("{tip}\n^{old}\n")
    };
    if let Some(mut stdin) = packer.stdin.take() {
        use std::io::Write;
        // A short list of revisions: pack-objects reads it all before it writes anything.
        let _ = stdin.write_all(revs.as_bytes());
    }
    let mut index = git::command(&project.top);
    index.args(["index-pack", "--stdin", "--fix-thin"]);
    if let Some(stdout) = packer.stdout.take() {
        index.stdin(Stdio::from(stdout));
    }
    let indexed = index
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| spawn_failed(&index, e));
    let mut indexer = match indexed {
        Ok(child) => child,
        Err(e) => {
            let _ = packer.kill();
            let _ = packer.wait();
            return Err(e);
        }
    };
    let packed = git::collect(&mut packer, &pack, git::TIMEOUT)?;
    let indexed = git::collect(&mut indexer, &index, git::TIMEOUT)?;
    git::checked(&pack, packed)?;
    git::checked(&index, indexed)?;
    Ok(())
}
