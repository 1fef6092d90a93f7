//! `isolate prune [--dry-run] [--json]`: settles lost jobs, then removes the managed worktrees that
//! are clean, not running, and whose branch holds no commit the project branch lacks (a squash or
//! rebase merge counts as merged), with their branch and record; settles the branches of jobs whose
//! worktree is gone, and `isolate/*` branches no record knows (merged: deleted; unmerged: listed as
//! kept). Every worktree and branch it keeps is listed with its reason. What it does and what
//! `--dry-run` and `worktrees` say it would do come from one survey (`cleanup::survey`); each
//! removal goes through the cleanup rule (import, record checked against the disk, decision taken
//! again right before deleting). It takes a lock, so two prunes never work at once.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cli::PruneArgs;
use crate::command::print_json;
use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;
use crate::job::id::JobId;
use crate::job::record::{Record, State};
use crate::job::{project, store, worktrees};
use crate::supervise::stop::kill_leftovers;
use crate::sys::lock::Lock;
use crate::words::{plural, timestamp};
use crate::worktree::checkouts;
use crate::worktree::cleanup::{
    self, Action, Branch, BranchAction, Outcome, Projects, Recorded, Settling, Tree, Verdict,
};
use crate::worktree::create::pin_ref;
use crate::worktree::standing;

/// One line of what prune did (or, with `--dry-run`, would do).
#[derive(Debug, Serialize)]
struct Line {
    id: String,
    path: String,
    /// The project the worktree or branch belongs to (its top level; empty when unknown).
    repo: String,
    /// `removed`, `would remove`, or `kept`.
    action: &'static str,
    /// `deleted`, `would delete`, or `kept`; absent when the project has no branch for the job.
    #[serde(skip_serializing_if = "Option::is_none")]
    branch: Option<&'static str>,
    reason: String,
}

impl Line {
    fn new(id: &str, path: &str, outcome: &Outcome, dry_run: bool) -> Line {
        Line {
            id: id.to_string(),
            path: path.to_string(),
            repo: String::new(),
            action: match (outcome.action, dry_run) {
                (Action::Remove, false) => "removed",
                (Action::Remove, true) => "would remove",
                (Action::Keep, _) => "kept",
            },
            branch: outcome.branch.map(|b| match (b, dry_run) {
                (BranchAction::Delete, false) => "deleted",
                (BranchAction::Delete, true) => "would delete",
                (BranchAction::Keep, _) => "kept",
            }),
            reason: outcome.reason.clone(),
        }
    }

    fn kept(id: &str, path: &str, reason: String) -> Line {
        Line {
            id: id.to_string(),
            path: path.to_string(),
            repo: String::new(),
            action: "kept",
            branch: None,
            reason,
        }
    }
}

pub fn run(args: PruneArgs) -> Result<i32> {
    if args.caches {
        return prune_caches(&args);
    }
    let lines = prune(&args)?;
    if args.json {
        return print_json(&lines);
    }
    for l in &lines {
        let path = if l.path.is_empty() { "-" } else { &l.path };
        // The reason can name refs and files of the job's repository: shown, never obeyed.
        let reason = crate::controls::name(&l.reason);
        out!("{:<13} {:<28} {} ({reason})", l.action, l.id, path)?;
    }
    if lines.is_empty() {
        out!("no managed worktrees")?;
    }
    Ok(0)
}

fn prune(args: &PruneArgs) -> Result<Vec<Line>> {
    let state = store::state_dir()?;
    std::fs::create_dir_all(&state).map_err(|e| Error::io("cannot create", &state, e))?;
    let _lock = Lock::exclusive(&state.join("prune.lock"))?;
    let mut lines = Vec::new();
    let mut projects: Vec<PathBuf> = Vec::new();
    let mut found = Projects::default();
    let scope = project::scope(&state, args.all_projects)?;
    let mut repos = std::collections::HashMap::new();
    for (dir, record) in store::list_all(&state) {
        if !project::within(&record, scope.as_deref()) {
            continue;
        }
        repos.insert(
            record.id.clone(),
            project::of(&record).display().to_string(),
        );
        let Some(wt) = record.worktree.clone() else {
            // No worktree to remove; a lost job's leftovers are stopped all the same.
            if record.effective_state() == State::Lost && !args.dry_run {
                settle_lost(&dir);
            }
            continue;
        };
        if !projects.iter().any(|p| p.as_os_str() == wt.repo.as_str()) {
            projects.push(PathBuf::from(&wt.repo));
        }
        if record.effective_state() == State::Lost && !args.dry_run {
            settle_lost(&dir);
            if store::read_record(&dir).is_ok_and(|r| r.effective_state() != State::Lost) {
                // It ended normally as we looked: the next prune sees it as it is.
                lines.push(Line::kept(
                    &record.id,
                    &wt.path,
                    "ended while prune looked".into(),
                ));
                continue;
            }
        }
        match settle(&state, &dir, &record, args.dry_run, &mut found) {
            Ok(Some(line)) => lines.push(line),
            Ok(None) => {}
            Err(e) if wt.removed => {
                // Only a branch was left to settle; the record no longer opens (its project moved
                // or is gone): nothing to remove, nothing to say beyond the reason.
                lines.push(Line::kept(&record.id, "", format!("cannot decide: {e}")));
            }
            Err(e) => lines.push(Line::kept(
                &record.id,
                &wt.path,
                format!("cannot decide: {e}"),
            )),
        }
    }
    // Branches no record knows: the current project's, and those of every project on record. Not
    // where a job wrote (its kept worktree, where its end sends the user): git would run there
    // with the user's rights on what the job planted (a merge driver `standing` would start).
    let here = std::env::current_dir()
        .ok()
        .filter(|cwd| worktrees::containing(cwd, &state).is_none())
        .and_then(|cwd| Project::discover(&cwd).ok())
        .filter(|here| worktrees::containing(&here.git_dir, &state).is_none());
    if let Some(here) = here {
        if !projects.contains(&here.top) {
            projects.push(here.top);
        }
    }
    for line in &mut lines {
        if let Some(repo) = repos.get(&line.id) {
            line.repo = repo.clone();
        }
    }
    for top in &projects {
        let Ok(found) = Project::discover(top) else {
            continue;
        };
        lines.extend(
            orphans(&found, &state, args.dry_run)
                .into_iter()
                .map(|mut l| {
                    l.repo = found.top.display().to_string();
                    l
                }),
        );
    }
    Ok(lines)
}

/// One job with a worktree: surveyed, and, unless `dry_run` or the survey keeps everything,
/// settled; `None` when nothing of it is left to settle. Its project from `found`, shared by the
/// jobs of one prune.
fn settle(
    state: &Path,
    dir: &Path,
    record: &Record,
    dry_run: bool,
    found: &mut Projects,
) -> Result<Option<Line>> {
    let recorded = Recorded::open_among(state, record, found)?;
    let job = recorded.job(Settling::Prune);
    let (facts, verdict) = cleanup::survey(&job);
    if matches!(facts.tree, Tree::Removed) && facts.branch == Branch::Gone {
        return Ok(None);
    }
    let planned = cleanup::outcome(&job, &facts, &verdict);
    let path = &recorded.worktree.path;
    if dry_run || matches!(verdict, Verdict::Keep(_)) {
        return Ok(Some(Line::new(&record.id, path, &planned, dry_run)));
    }
    let settled = cleanup::settle(&job)?;
    let done = settled.outcome;
    let branch_left = done.branch == Some(BranchAction::Keep);
    if done.action == Action::Remove && !branch_left {
        store::forget(dir)?;
    } else if settled.report.removed && !record.worktree.as_ref().is_some_and(|w| w.removed) {
        // The worktree went and its branch stays: the record says so from now on.
        let mut updated = record.clone();
        updated.worktree = Some(settled.report);
        store::write_record(dir, &updated)?;
    }
    Ok(Some(Line::new(&record.id, path, &done, false)))
}

/// `isolate/<id>` branches of `project` whose job has no directory in the state directory: one the
/// project's current branch has all of is deleted, one with commits it lacks is kept and listed
/// with the command that shows them. A branch that still has its base pin belongs to a worktree
/// that is alive somewhere (another state directory's job, running): kept; so is a branch a
/// checkout holds, and a pin without a branch is left alone (it keeps only a commit from `gc`).
fn orphans(project: &Project, state: &Path, dry_run: bool) -> Vec<Line> {
    let Ok(out) = git::run(
        &project.top,
        [
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "--",
            "refs/heads/isolate/",
            "refs/isolate/",
        ],
    ) else {
        return Vec::new();
    };
    let text = out.text();
    let refs: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once(' ')).collect();
    let target = git::try_run(&project.top, ["symbolic-ref", "--quiet", "HEAD"])
        .ok()
        .filter(|o| o.status.success())
        .map(|o| o.text());
    let mut lines = Vec::new();
    for (name, tip) in &refs {
        let Some(id) = name
            .strip_prefix("refs/heads/isolate/")
            .and_then(JobId::parse)
        else {
            continue;
        };
        // A job being started has its directory before its refs: only a job without one is
        // nobody's here.
        if store::known(state, id.as_str()) {
            continue;
        }
        let kept = |reason: String| Outcome {
            action: Action::Keep,
            branch: Some(BranchAction::Keep),
            reason: format!("no job on record; {reason}"),
        };
        let outcome = match orphan_fate(project, &id, name, tip, &refs, target.as_deref()) {
            Ok(Fate::Landed(target)) if dry_run => Outcome {
                action: Action::Remove,
                branch: Some(BranchAction::Delete),
                reason: format!("no job on record; its commits are in {target}"),
            },
            Ok(Fate::Landed(target)) => {
                let stdin = format!("delete {name} {tip}\n");
                match git::run_with_input(&project.top, ["update-ref", "--stdin"], stdin.as_bytes())
                {
                    Ok(_) => Outcome {
                        action: Action::Remove,
                        branch: Some(BranchAction::Delete),
                        reason: format!("no job on record; its commits are in {target}"),
                    },
                    Err(_) => kept("the branch moved while prune looked".into()),
                }
            }
            Ok(Fate::Kept(why)) => kept(why),
            Err(e) => kept(format!("cannot decide: {e}")),
        };
        lines.push(Line::new(&id.branch(), "", &outcome, dry_run));
    }
    lines
}

/// What becomes of an orphaned job branch.
enum Fate {
    /// Its commits are in this branch (short name): it goes.
    Landed(String),
    Kept(String),
}

fn orphan_fate(
    project: &Project,
    id: &JobId,
    name: &str,
    tip: &str,
    refs: &[(&str, &str)],
    target: Option<&str>,
) -> Result<Fate> {
    let pin = pin_ref(id);
    if refs.iter().any(|(n, _)| *n == pin) {
        return Ok(Fate::Kept(format!(
            "its base pin {pin} is there, so a worktree (of another state directory?) may use it"
        )));
    }
    if let Some(held) = checkouts::holding(project, name)? {
        return Ok(Fate::Kept(format!("it is {held}")));
    }
    let Some(target) = target.filter(|t| *t != name) else {
        return Ok(Fate::Kept(
            "the project's checkout is on no other branch to compare it with".into(),
        ));
    };
    let short = target
        .strip_prefix("refs/heads/")
        .unwrap_or(target)
        .to_string();
    let standing = standing::standing(&project.top, target, tip)?;
    if standing.landed() {
        return Ok(Fate::Landed(short));
    }
    Ok(Fate::Kept(format!(
        "{} not in {short} (git -C {} log {short}..{})",
        plural(standing.unmerged, "commit", "commits"),
        crate::controls::shell_quote(&project.top),
        id.branch()
    )))
}

/// A lost job: what is left of its processes is killed, and its record says it was lost.
fn settle_lost(dir: &Path) {
    // Read again now that the supervisor is known to be gone: it may have written the end between
    // the listing and the check, and that record must not be overwritten.
    let Ok(record) = store::read_record(dir) else {
        return;
    };
    if !record.state().live() || record.supervisor_alive() {
        return;
    }
    kill_leftovers(&record);
    let mut settled = record.clone();
    settled.set_state(State::Lost);
    if settled.ended_at.is_none() {
        settled.ended_at = Some(timestamp(std::time::SystemTime::now()));
    }
    if let Some(wt) = settled.worktree.as_mut() {
        wt.reason =
            "lost: its supervisor died without recording an end; the worktree was kept untouched"
                .into();
    }
    let _ = store::write_record(dir, &settled);
}

/// One project's jobs' cache, and what `prune --caches` did with it.
#[derive(Debug, Serialize)]
struct CacheLine {
    path: String,
    bytes: u64,
    /// `removed`, `would remove`, or `kept`.
    action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

/// `prune --caches`: every project's jobs' cache removed (isolate made them all), but that of a
/// project one of whose jobs runs (it reads and writes it now).
fn prune_caches(args: &PruneArgs) -> Result<i32> {
    let state = store::state_dir()?;
    let root = crate::sandbox::caches::root(&state);
    let running: Vec<String> = store::list(&state)
        .into_iter()
        .filter(|(_, r)| matches!(r.state(), State::Running))
        .map(|(_, r)| match &r.worktree {
            Some(wt) => git::project::key_of(Path::new(&wt.repo)),
            None => git::project::key_of(Path::new(&r.cwd)),
        })
        .collect();
    let mut lines = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    entries.sort();
    for dir in entries {
        let (bytes, _) = crate::sandbox::caches::size(&dir);
        let key = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        let (action, reason) = if key.is_some_and(|k| running.contains(&k)) {
            ("kept", Some("a job of this project runs".to_string()))
        } else if args.dry_run {
            ("would remove", None)
        } else {
            match crate::sys::remove::remove_tree(&dir) {
                Ok(()) => ("removed", None),
                Err(e) => ("kept", Some(format!("cannot remove it: {e}"))),
            }
        };
        lines.push(CacheLine {
            path: dir.display().to_string(),
            bytes,
            action,
            reason,
        });
    }
    if args.json {
        return print_json(&lines);
    }
    if lines.is_empty() {
        say!("isolate: no jobs' caches in {}", root.display());
    }
    for l in &lines {
        let reason = l
            .reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        say!(
            "{} {} ({} MiB){reason}",
            l.action,
            l.path,
            l.bytes / (1024 * 1024)
        );
    }
    Ok(0)
}
