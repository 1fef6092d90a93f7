//! The project's checkout of the project branch fast-forwarded to the merge, only where nothing of
//! the user's is in the way, and put back if git fails part-way. Never over the user's changes.

use std::path::Path;

use super::plan::{Change, Preview};
use super::read::{changes, rev};
use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;

/// The longest file name (`NAME_MAX`) and path (`PATH_MAX`) a checkout can hold.
const NAME_MAX: usize = 255;
const PATH_MAX: usize = 4096;

/// The checkout `dir` of the project branch, fast-forwarded from `preview.shown` to `result`: only
/// if nothing of the user's is where the merge writes, and every name fits the filesystem (git
/// would fail part-way and leave the checkout half-merged). If git fails all the same, the files
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
        top_len + c.path.len() >= PATH_MAX || c.path.split('/').any(|part| part.len() > NAME_MAX)
    }) {
        return Err(refused(format!(
            "{} is a name longer than a checkout can hold",
            crate::controls::name(&long.path)
        )));
    }
    // `:(literal)`: a name the job chose is a path, never pathspec magic.
    let literal: Vec<String> = involved
        .iter()
        .map(|c| format!(":(literal){}", c.path))
        .collect();
    let mut args = vec![
        "status",
        "--porcelain",
        "--untracked-files=all",
        "--ignored=matching",
        "--",
    ];
    args.extend(literal.iter().map(String::as_str));
    let dirty = git::run(dir, &args)?.text();
    if !dirty.is_empty() {
        let shown: Vec<String> = dirty.lines().map(crate::controls::name).collect();
        return Err(refused(format!(
            "the checkout has changes of its own (uncommitted, untracked or ignored) where the merge writes:\n{}",
            shown.join("\n")
        )));
    }
    if rev(project, target_ref)? != preview.shown {
        return Err(refused(format!(
            "{} moved since the preview",
            preview.target
        )));
    }
    // --no-overwrite-ignore: an ignored file or directory in the way (a `.env`, `data/`) stops the
    // merge rather than go.
    let merged = git::try_run(
        dir,
        [
            "merge",
            "--ff-only",
            "--quiet",
            "--no-overwrite-ignore",
            result,
        ],
    )?;
    if merged.status.success() {
        return Ok(());
    }
    restore(dir, preview, &involved);
    Err(Error::git(
        "merge --ff-only (in the project's checkout, which is put back as it was)",
        merged.status.code(),
        &merged.stderr,
    ))
}

/// After a fast-forward that failed part-way: the files the merge touched as they were at the
/// commit shown (those it added, where nothing of the user's was in the way, removed again).
fn restore(dir: &Path, preview: &Preview, involved: &[Change]) {
    let (added, existed): (Vec<&Change>, Vec<&Change>) =
        involved.iter().partition(|c| c.status == 'A');
    if !existed.is_empty() {
        let mut args = vec![
            "checkout".to_string(),
            preview.shown.clone(),
            "--".to_string(),
        ];
        args.extend(existed.iter().map(|c| format!(":(literal){}", c.path)));
        let _ = git::try_run(dir, &args);
    }
    for change in added {
        let path = dir.join(&change.path);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir()) {
            let _ = std::fs::remove_file(&path);
        }
    }
}
