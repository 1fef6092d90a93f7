//! The reads of the project a merge takes: the merged tree, refs, commit counts and the files that
//! differ. Never writes a ref.

use super::plan::{Change, Kind};
use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;

/// `git merge-tree --write-tree OURS THEIRS` in the project: the merged tree, or `None` when they
/// conflict.
pub(super) fn merge_tree(project: &Project, ours: &str, theirs: &str) -> Result<Option<String>> {
    let out = git::try_run(
        &project.top,
        [
            "merge-tree",
            "--write-tree",
            "--no-messages",
            "--end-of-options",
            ours,
            theirs,
        ],
    )?;
    match out.status.code() {
        Some(0) => Ok(out.text().lines().next().map(str::to_string)),
        Some(1) => Ok(None),
        code => Err(Error::git("merge-tree --write-tree", code, &out.stderr)),
    }
}

pub(super) fn rev(project: &Project, reference: &str) -> Result<String> {
    Ok(git::run(
        &project.top,
        ["rev-parse", "--verify", "--end-of-options", reference],
    )?
    .text())
}

/// What differs from `from` to `to` (commits or trees), one change a path, with each side's mode and
/// a link's target. `--no-renames`: a rename shows as the deletion and the addition it is,
/// whatever the user's `diff.renames` (a rename would list the new name only).
/// `--ignore-submodules=none`: a submodule's new commit is a change, whatever `diff.ignoreSubmodules`
/// or a `.gitmodules` the job wrote (`ignore = all`) say.
pub(super) fn changes(project: &Project, from: &str, to: &str) -> Result<Vec<Change>> {
    let out = git::run(
        &project.top,
        [
            "diff",
            "--raw",
            "--no-abbrev",
            "--no-renames",
            "--ignore-submodules=none",
            "--no-ext-diff",
            "--no-textconv",
            "-z",
            "--end-of-options",
            from,
            to,
        ],
    )?;
    let mut fields = out.stdout.split(|&b| b == 0).filter(|p| !p.is_empty());
    let mut changes = Vec::new();
    // `:OLDMODE NEWMODE OLDID NEWID STATUS` then the path.
    while let (Some(raw), Some(name)) = (fields.next(), fields.next()) {
        let raw = String::from_utf8_lossy(raw);
        let parts: Vec<&str> = raw.trim_start_matches(':').split(' ').collect();
        let [before, after, _, object, status] = parts[..] else {
            return Err(Error::git("diff --raw", None, raw.as_bytes()));
        };
        let mode = |m: &str| {
            u32::from_str_radix(m, 8)
                .map(Kind::from_mode)
                .unwrap_or(Kind::Other(0))
        };
        changes.push(Change {
            status: status.chars().next().unwrap_or('M'),
            path: String::from_utf8_lossy(name).into_owned(),
            name: name.to_vec(),
            before: mode(before),
            after: mode(after),
            target: None,
            object: object.to_string(),
        });
    }
    read_targets(project, &mut changes)?;
    Ok(changes)
}

/// The longest link target read (`PATH_MAX`): a longer one no checkout can make.
const TARGET_MAX: u64 = 4096;

/// Each new link's target, from its blob: sizes first, then the blobs of at most `TARGET_MAX`
/// bytes (`cat-file --batch`).
fn read_targets(project: &Project, changes: &mut [Change]) -> Result<()> {
    let links: Vec<usize> = (0..changes.len())
        .filter(|&i| changes[i].after == Kind::Link)
        .collect();
    if links.is_empty() {
        return Ok(());
    }
    let ids: Vec<&str> = links.iter().map(|&i| changes[i].object.as_str()).collect();
    let small: Vec<usize> = links
        .iter()
        .zip(sizes(project, &ids)?)
        .filter(|(_, size)| size.is_some_and(|n| n <= TARGET_MAX))
        .map(|(&i, _)| i)
        .collect();
    let ids: String = small
        .iter()
        .map(|&i| format!("{}\n", changes[i].object))
        .collect();
    let blobs = git::run_with_input(&project.top, ["cat-file", "--batch"], ids.as_bytes())?;
    let mut rest = &blobs.stdout[..];
    for &i in &small {
        // `ID TYPE SIZE\n`, SIZE bytes, `\n`.
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&rest[..end]);
        let size: usize = header
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let body = rest.get(end + 1..end + 1 + size).unwrap_or_default();
        changes[i].target = Some(String::from_utf8_lossy(body).into_owned());
        rest = rest.get(end + 2 + size..).unwrap_or_default();
    }
    Ok(())
}

/// The size of each object `ids` names in the project (`None` where it has none), in one
/// `cat-file --batch-check`.
pub(super) fn sizes(project: &Project, ids: &[&str]) -> Result<Vec<Option<u64>>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
    let out = git::run_with_input(
        &project.top,
        ["cat-file", "--batch-check=%(objectsize)"],
        input.as_bytes(),
    )?;
    let mut sizes: Vec<Option<u64>> = out.text().lines().map(|l| l.parse().ok()).collect();
    sizes.resize(ids.len(), None);
    Ok(sizes)
}
