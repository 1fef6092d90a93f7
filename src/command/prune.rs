//! `isolate prune [--dry-run] [--json]`: settles lost jobs, then removes the managed worktrees that
//! are clean, not running, and whose branch holds no commit the project branch lacks (a squash or
//! rebase merge counts as merged); every worktree it keeps is listed with its reason. It takes a
//! lock, so two prunes never work at once, and each removal goes through the cleanup rule (import,
//! record checked against the disk, decision taken again right before deleting).

use std::path::Path;

use serde::Serialize;

use crate::cli::PruneArgs;
use crate::command::stop::kill_leftovers;
use crate::command::{print_json, report_error};
use crate::error::{Error, Result};
use crate::git;
use crate::job::record::{Record, State};
use crate::job::store;
use crate::worktree::cleanup::{self, Recorded};
use crate::worktree::marks;

#[derive(Debug, Serialize)]
struct Outcome {
    id: String,
    path: String,
    /// `removed`, `would remove`, or `kept`.
    action: &'static str,
    reason: String,
}

pub fn run(args: PruneArgs) -> i32 {
    match prune(&args) {
        Ok(outcomes) if args.json => print_json(&outcomes),
        Ok(outcomes) => {
            for o in &outcomes {
                println!("{:<13} {:<28} {} ({})", o.action, o.id, o.path, o.reason);
            }
            if outcomes.is_empty() {
                println!("no managed worktrees");
            }
            0
        }
        Err(e) => {
            report_error(&e);
            1
        }
    }
}

fn prune(args: &PruneArgs) -> Result<Vec<Outcome>> {
    let state = store::state_dir()?;
    std::fs::create_dir_all(&state).map_err(|e| Error::io("cannot create", &state, e))?;
    let _lock = lock(&state.join("prune.lock"))?;
    let mut outcomes = Vec::new();
    for (dir, record) in store::list(&state) {
        let Some(wt) = record.worktree.clone() else {
            continue;
        };
        let outcome = |action, reason: String| Outcome {
            id: record.id.clone(),
            path: wt.path.clone(),
            action,
            reason,
        };
        match record.effective_state() {
            State::Running => {
                outcomes.push(outcome("kept", "running".into()));
                continue;
            }
            State::Lost => {
                if !args.dry_run {
                    settle_lost(&dir);
                }
                if store::read_record(&dir).is_ok_and(|r| r.effective_state() != State::Lost) {
                    // It ended normally as we looked: the next prune sees it as it is.
                    outcomes.push(outcome("kept", "ended while prune looked".into()));
                    continue;
                }
                outcomes.push(outcome(
                    "kept",
                    "lost: its supervisor died; the worktree is kept untouched".into(),
                ));
                continue;
            }
            _ if wt.removed => continue,
            _ => {}
        }
        let Some(row) = marks::row(&state, &record) else {
            continue;
        };
        let prunable = row.error.is_none()
            && row.dirty == 0
            && row
                .marks
                .iter()
                .any(|m| m == "merged" || m == "no commits" || m == "missing");
        if !prunable {
            let reason = match &row.error {
                Some(e) => format!("cannot decide: {e}"),
                None if row.unmerged > 0 => format!(
                    "{} commit{} not in {}",
                    row.unmerged,
                    if row.unmerged == 1 { "" } else { "s" },
                    row.project_branch
                        .as_deref()
                        .unwrap_or("the project branch")
                ),
                None => row.marks.join(", "),
            };
            outcomes.push(outcome("kept", reason));
            continue;
        }
        if args.dry_run {
            outcomes.push(outcome("would remove", row.marks.join(", ")));
            continue;
        }
        match remove(
            &state,
            &dir,
            &record,
            row.marks.iter().any(|m| m == "merged"),
        ) {
            Ok(()) => outcomes.push(outcome("removed", row.marks.join(", "))),
            Err(e) => outcomes.push(outcome("kept", e.to_string())),
        }
    }
    Ok(outcomes)
}

/// Through the cleanup rule; a merged branch goes too (its commits are in the project branch).
fn remove(state: &Path, dir: &Path, record: &Record, merged: bool) -> Result<()> {
    let recorded = Recorded::open(state, record)?;
    let report = cleanup::settle(&recorded.job(false))?;
    if !report.removed && Path::new(&report.path).exists() {
        return Err(Error::Refused(report.reason));
    }
    if merged && report.branch_kept {
        let branch = format!("refs/heads/{}", recorded.id.branch());
        if let Some(tip) = &report.branch_tip {
            git::run(
                &recorded.project.top,
                ["update-ref", "-d", "--end-of-options", &branch, tip],
            )?;
        }
    }
    store::forget(dir);
    Ok(())
}

/// A lost job: what is left of its processes is killed, and its record says it was lost.
fn settle_lost(dir: &Path) {
    // Read again now that the supervisor is known to be gone: it may have written the end between
    // the listing and the check, and that record must not be overwritten.
    let Ok(record) = store::read_record(dir) else {
        return;
    };
    if record.state != State::Running || record.supervisor_alive() {
        return;
    }
    kill_leftovers(&record);
    let mut settled = record.clone();
    settled.state = State::Lost;
    if settled.ended_at.is_none() {
        settled.ended_at =
            Some(humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string());
    }
    if let Some(wt) = settled.worktree.as_mut() {
        wt.reason =
            "lost: its supervisor died without recording an end; the worktree was kept untouched"
                .into();
    }
    let _ = store::write_record(dir, &settled);
}

/// An exclusive `flock` held while this prune runs.
fn lock(path: &Path) -> Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::io("cannot open", path, e))?;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&file), libc::LOCK_EX) } != 0 {
        return Err(Error::io(
            "cannot lock",
            path,
            std::io::Error::last_os_error(),
        ));
    }
    Ok(file)
}
