//! THE cleanup decision of spec/worktrees.md ("When a job ends"): one predicate, `decide`, used by
//! every path that ends a job, and `settle`, which gathers the facts for it, imports first, and
//! deletes only what the decision allows, after checking the record against the disk and
//! re-checking the decision immediately before deleting. A probe that cannot decide keeps.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde::Serialize;

use crate::controls::shell_quote;

use crate::error::Result;
use crate::git;
use crate::job::id::JobId;
use crate::job::record::{Dirty, State, WorktreeReport};
use crate::job::store;
use crate::sys::lock::Lock;
use crate::worktree::checkouts;
use crate::worktree::create::pin_ref;
use crate::worktree::import;
use crate::worktree::inspect::{self, Inspection};
use crate::worktree::project::Project;
use crate::worktree::remove;
use crate::worktree::standing::{self, Standing};

/// Whether the job's processes still run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Life {
    Ended,
    Running,
    /// Its supervisor died without recording an end.
    Lost,
}

/// The job's worktree directory.
#[derive(Debug)]
pub enum Tree {
    /// There: the read of its repository, or why it could not be read.
    Present(std::result::Result<Inspection, String>),
    /// Gone, though isolate did not remove it.
    Missing,
    /// isolate removed it when the job ended: only the branch is left to settle.
    Removed,
}

/// The job's branch in the project, as the decision sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Branch {
    /// The import failed, or the branch could not be read: nothing is decided on it.
    Unknown(String),
    /// The job has commits the project does not have yet (a survey, which imports nothing).
    ToImport,
    /// The project has no such branch.
    Gone,
    /// At base: no commits of its own.
    AtBase,
    /// Commits beyond base, and where they stand against the project branch when that was asked
    /// for and there is one.
    Commits {
        count: usize,
        standing: Option<Standing>,
    },
}

impl Branch {
    /// Commits beyond base in the project (none when unknown or not yet imported).
    pub fn commits(&self) -> usize {
        match self {
            Branch::Commits { count, .. } => *count,
            _ => 0,
        }
    }
}

/// What is known about a worktree when its job ends, or when `rm`, `prune` or `worktrees` look.
#[derive(Debug)]
pub struct Facts {
    pub life: Life,
    /// Another live job has this worktree as its own.
    pub in_use: bool,
    pub tree: Tree,
    /// The project's branch (after the import, when one ran).
    pub branch: Branch,
    /// The import copied objects (it took time: the decision is taken again before deleting), so
    /// the branch's commits are new in the project and are not settled now.
    pub copied: bool,
    /// The project's base pin, which must point at the record's base while the worktree exists.
    pub pin: Option<String>,
    /// The project's branch after the import (the job's tip when it succeeded).
    pub branch_after: Option<String>,
    /// Other branches and tags of the job (and a detached HEAD) whose commits the project lacks.
    pub unimported: Vec<String>,
    /// A checkout of the project that holds the job's branch (checked out, being rebased or
    /// bisected), when the branch could otherwise go: it never goes from under a checkout.
    pub branch_held: Option<String>,
    pub settling: Settling,
}

/// Who settles the worktree, which decides how much of it may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settling {
    /// The job's end (`--keep`: the worktree stays), or an import (`import`, `merge`), which keeps.
    End { keep: bool },
    /// `rm`: a worktree that holds no work goes; the branch too when the project branch has all of
    /// it, else the branch stays and `rm` says so.
    Rm,
    /// `prune`: a worktree goes only when its branch holds nothing the project branch lacks; the
    /// branch goes with it.
    Prune,
}

impl Settling {
    /// A branch the project branch has all of goes.
    fn settles_landed(self) -> bool {
        matches!(self, Settling::Rm | Settling::Prune)
    }
}

/// Each kind of work that keeps a worktree, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Work {
    pub modified: usize,
    pub untracked: usize,
    pub conflicted: usize,
    pub stash_entries: usize,
    /// Other refs of the job holding commits the project does not have.
    pub refs: usize,
    pub in_progress: Vec<&'static str>,
}

impl Work {
    fn of(insp: &Inspection, unimported: &[String]) -> Work {
        Work {
            modified: insp.modified,
            untracked: insp.untracked,
            conflicted: insp.conflicted,
            stash_entries: insp.stash_entries,
            refs: unimported.len(),
            in_progress: insp.in_progress.clone(),
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Work::default()
    }
}

/// "3 modified, 1 untracked, 1 stash entry".
impl std::fmt::Display for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        let mut count = |n: usize, one: &str, many: &str| {
            if n > 0 {
                parts.push(format!("{n} {}", if n == 1 { one } else { many }));
            }
        };
        count(self.modified, "modified", "modified");
        count(self.untracked, "untracked", "untracked");
        count(self.conflicted, "conflicted", "conflicted");
        count(self.stash_entries, "stash entry", "stash entries");
        count(
            self.refs,
            "ref with commits not in the project",
            "refs with commits not in the project",
        );
        for op in &self.in_progress {
            parts.push(format!("{op} in progress"));
        }
        f.write_str(&parts.join(", "))
    }
}

/// Why a worktree stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keep {
    Running,
    Lost,
    InUse,
    Unreadable(String),
    ImportFailed(String),
    Work(Work),
    /// `--keep`.
    Asked,
    /// The record's claims do not match the disk.
    Mismatch(String),
    /// The second look, right before deleting, differed from the first.
    Changed,
    /// `prune`: the branch holds commits the project branch lacks.
    Unmerged(Unmerged),
    /// `prune`: a checkout of the project holds the branch.
    BranchHeld(String),
}

/// Why a branch is not known to be in the project branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmerged {
    /// This many commits whose change the project branch does not have.
    Commits(usize),
    /// Commits the project has not imported yet.
    ToImport,
    /// Imported just now: settled by the next look.
    JustImported,
    /// The job started on a detached HEAD, or its project branch is gone: nothing to compare with.
    NoProjectBranch,
}

impl std::fmt::Display for Keep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Keep::Running => f.write_str("running"),
            Keep::Lost => f.write_str("lost: its supervisor died; the worktree is kept untouched"),
            Keep::InUse => f.write_str("in use by another job"),
            Keep::Unreadable(why) => write!(f, "cannot read the job's repository ({why})"),
            Keep::ImportFailed(why) => write!(f, "import failed ({why})"),
            Keep::Work(work) => write!(f, "{work}"),
            Keep::Asked => f.write_str("--keep"),
            Keep::Mismatch(why) => {
                write!(f, "record does not match the disk: {why}; nothing deleted")
            }
            Keep::Changed => f.write_str("the worktree changed while isolate was deciding"),
            Keep::Unmerged(Unmerged::Commits(n)) => {
                write!(f, "{n} commit{} not in the project branch", plural(*n))
            }
            Keep::Unmerged(Unmerged::ToImport) => f.write_str("commits not imported yet"),
            Keep::Unmerged(Unmerged::JustImported) => f.write_str("commits imported just now"),
            Keep::BranchHeld(held) => write!(f, "its branch is {held}"),
            Keep::Unmerged(Unmerged::NoProjectBranch) => {
                f.write_str("commits, and no project branch to compare them with")
            }
        }
    }
}

/// What happens to the worktree and to the project's branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The worktree stays as it is; so does the branch.
    Keep(Keep),
    /// What is there of the worktree goes, and its base pin; the branch too when `delete_branch`
    /// (it has no commits of its own, or, for `rm` and `prune`, the project branch has them).
    Remove { delete_branch: bool },
}

/// The predicate. Order matters: running, in use, gone, not readable, import failed, work in the
/// tree, --keep, clean.
pub fn decide(facts: &Facts) -> Verdict {
    match facts.life {
        Life::Running => return Verdict::Keep(Keep::Running),
        Life::Lost => return Verdict::Keep(Keep::Lost),
        Life::Ended => {}
    }
    if facts.in_use {
        return Verdict::Keep(Keep::InUse);
    }
    let insp = match &facts.tree {
        Tree::Missing | Tree::Removed => {
            return Verdict::Remove {
                delete_branch: branch_goes(facts),
            }
        }
        Tree::Present(Err(why)) => return Verdict::Keep(Keep::Unreadable(why.clone())),
        Tree::Present(Ok(insp)) => insp,
    };
    if let Branch::Unknown(why) = &facts.branch {
        return Verdict::Keep(Keep::ImportFailed(why.clone()));
    }
    let work = Work::of(insp, &facts.unimported);
    if !work.is_empty() {
        return Verdict::Keep(Keep::Work(work));
    }
    if facts.settling == (Settling::End { keep: true }) {
        return Verdict::Keep(Keep::Asked);
    }
    if facts.settling == Settling::Prune && !branch_goes(facts) {
        return Verdict::Keep(match &facts.branch_held {
            Some(held) => Keep::BranchHeld(held.clone()),
            None => Keep::Unmerged(unmerged(facts)),
        });
    }
    Verdict::Remove {
        delete_branch: branch_goes(facts),
    }
}

/// A branch at base goes; so does, for `rm` and `prune`, one the project branch has all of (unless
/// its commits were imported just now: what is new in the project is never settled in the same
/// step, so that a dry run predicts it).
fn branch_goes(facts: &Facts) -> bool {
    if facts.branch_held.is_some() {
        return false;
    }
    match &facts.branch {
        Branch::AtBase => true,
        Branch::Commits {
            standing: Some(standing),
            ..
        } => facts.settling.settles_landed() && !facts.copied && standing.landed(),
        _ => false,
    }
}

/// Why `prune` keeps a worktree for its branch.
fn unmerged(facts: &Facts) -> Unmerged {
    match &facts.branch {
        Branch::ToImport => Unmerged::ToImport,
        Branch::Commits {
            standing: Some(standing),
            ..
        } if !standing.landed() => Unmerged::Commits(standing.unmerged),
        Branch::Commits { .. } if facts.copied => Unmerged::JustImported,
        _ => Unmerged::NoProjectBranch,
    }
}

/// One job's worktree as the record names it.
pub struct Job<'a> {
    pub project: &'a Project,
    pub id: &'a JobId,
    /// `<worktree_root>/<project key>`: the only directory its worktree may sit in.
    pub key_dir: &'a Path,
    pub path: &'a Path,
    pub base: &'a str,
    /// The job's record directory: it holds `branch-tip`, where isolate last left the project's
    /// branch, and the lock that serialises imports of this job.
    pub job_dir: &'a Path,
    pub life: Life,
    /// The record says isolate removed the worktree when the job ended.
    pub removed: bool,
    pub settling: Settling,
    pub dispatch_dirty: bool,
    /// The project's branch the job was started from.
    pub project_branch: Option<&'a str>,
    /// The job's policy (what loads it again), named in the handoff of a kept worktree.
    pub policy: Option<&'a str>,
}

/// Whether a look at the worktree imports its commits first (every ending), or only reads
/// (`worktrees`, `prune --dry-run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    Import,
    Survey,
}

/// The decision as it stands, from a look that imports, moves and deletes nothing (`worktrees`,
/// `prune --dry-run`): what `settle` would do now.
pub fn survey(job: &Job) -> (Facts, Verdict) {
    let facts = gather(job, Look::Survey);
    let verdict = judge(job, &facts);
    (facts, verdict)
}

/// The predicate over the facts, and the record's claims checked against the disk.
fn judge(job: &Job, facts: &Facts) -> Verdict {
    match validate(job, facts) {
        Ok(()) => decide(facts),
        Err(why) => Verdict::Keep(Keep::Mismatch(why)),
    }
}

/// What settling does to a worktree (or did), as `prune`, `rm` and `worktrees` say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The worktree (what is there of it) and the job's record go.
    Remove,
    Keep,
}

/// What settling does to the job's branch in the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BranchAction {
    Delete,
    Keep,
}

/// The verdict as it is carried out: what happens to the worktree and to the branch, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub action: Action,
    /// `None` when the project has no branch for the job.
    pub branch: Option<BranchAction>,
    pub reason: String,
}

/// The outcome `verdict` gives over `facts`: the one reading of a decision that `prune --dry-run`,
/// `prune`, `rm` and `worktrees` all print.
pub fn outcome(job: &Job, facts: &Facts, verdict: &Verdict) -> Outcome {
    let has_branch = !matches!(facts.branch, Branch::Gone);
    match verdict {
        Verdict::Keep(keep) => Outcome {
            action: Action::Keep,
            branch: has_branch.then_some(BranchAction::Keep),
            reason: keep.to_string(),
        },
        Verdict::Remove { delete_branch } => {
            let branch = has_branch.then_some(if *delete_branch {
                BranchAction::Delete
            } else {
                BranchAction::Keep
            });
            let tree = match facts.tree {
                Tree::Present(_) => "clean",
                Tree::Missing => "worktree directory is missing",
                Tree::Removed => "worktree removed when the job ended",
            };
            let fate = branch_fate(job, facts, *delete_branch);
            // A removed worktree whose branch stays has nothing left to remove: it is kept, for
            // its branch.
            let action = match (&facts.tree, branch) {
                (Tree::Removed | Tree::Missing, Some(BranchAction::Keep)) => Action::Keep,
                _ => Action::Remove,
            };
            Outcome {
                action,
                branch,
                reason: if fate.is_empty() {
                    tree.to_string()
                } else {
                    format!("{tree}; {fate}")
                },
            }
        }
    }
}

/// What becomes of the job's branch, in words ("branch kept: 2 commits not in main").
pub fn branch_fate(job: &Job, facts: &Facts, delete_branch: bool) -> String {
    let target = job.project_branch.unwrap_or("the project branch");
    match (&facts.branch, delete_branch) {
        (Branch::Gone, _) => String::new(),
        (_, false) if facts.branch_held.is_some() => format!(
            "branch kept: {}",
            facts.branch_held.as_deref().unwrap_or_default()
        ),
        (Branch::AtBase, true) => "branch deleted: no commits".into(),
        (_, true) => format!("branch deleted: its commits are in {target}"),
        (Branch::AtBase, false) => "branch kept: no commits".into(),
        (Branch::ToImport, false) => "branch kept: commits to import".into(),
        (Branch::Unknown(why), false) => format!("branch kept: {why}"),
        (
            Branch::Commits {
                standing: Some(standing),
                ..
            },
            false,
        ) if !standing.landed() => format!(
            "branch kept: {} commit{} not in {target}",
            standing.unmerged,
            plural(standing.unmerged)
        ),
        (Branch::Commits { .. }, false) if facts.copied => {
            "branch kept: its commits were imported just now".into()
        }
        (Branch::Commits { count, .. }, false) => {
            format!("branch kept: {count} commit{} beyond base", plural(*count))
        }
    }
}

/// A settled worktree: the worktree part of the job's report, and what was done.
pub struct Settled {
    pub report: WorktreeReport,
    pub outcome: Outcome,
}

/// Imports, decides, and carries out the decision.
pub fn settle(job: &Job) -> Result<Settled> {
    let _lock = import_lock(job.job_dir)?;
    let branch = job.id.branch();
    let mut facts = gather(job, Look::Import);
    let mut verdict = judge(job, &facts);
    if matches!(verdict, Verdict::Remove { .. }) && facts.copied {
        // The import took a while: decide again on a fresh read, immediately before deleting.
        let mut again = gather(job, Look::Import);
        again.copied = true;
        if judge(job, &again) != verdict {
            verdict = Verdict::Keep(Keep::Changed);
        }
        facts = again;
    }

    let exists = matches!(facts.tree, Tree::Present(_));
    let mut outcome = outcome(job, &facts, &verdict);
    let mut failed = None;
    let mut removed = false;
    let mut branch_kept = !matches!(facts.branch, Branch::Gone);
    let ignored = match &facts.tree {
        Tree::Present(Ok(insp)) => insp.ignored,
        _ => 0,
    };
    let mut reason = match (&verdict, &facts.tree) {
        (Verdict::Keep(keep), _) => format!("kept: {keep}"),
        (Verdict::Remove { .. }, Tree::Missing) => "worktree directory is missing".to_string(),
        (Verdict::Remove { .. }, Tree::Removed) => "worktree removed".to_string(),
        (Verdict::Remove { .. }, Tree::Present(_)) => "clean".to_string(),
    };
    let commits = facts.branch.commits();
    if let Verdict::Remove { delete_branch } = verdict {
        if exists {
            match remove::remove_tree(job.path) {
                Ok(()) => removed = true,
                Err(e) => {
                    reason = format!("kept: cannot remove the worktree: {e}");
                    failed = Some(reason.clone());
                }
            }
        }
        if removed || !exists {
            let tip = facts.branch_after.as_deref().filter(|_| delete_branch);
            branch_kept = branch_kept && !delete_refs(job, facts.pin.is_some(), tip);
            let fate = branch_fate(job, &facts, !branch_kept);
            if !fate.is_empty() {
                reason = format!("{reason}; {fate}");
            }
        }
    }
    let insp = match &facts.tree {
        Tree::Present(Ok(insp)) => Some(insp),
        _ => None,
    };
    // Whether the project branch the job started from has its commits already.
    let contained = branch_kept
        && commits > 0
        && match (&facts.branch, job.project_branch, &facts.branch_after) {
            (
                Branch::Commits {
                    standing: Some(standing),
                    ..
                },
                _,
                _,
            ) => standing.landed(),
            (_, Some(target), Some(tip)) => git::try_run(
                &job.project.top,
                [
                    "merge-base",
                    "--is-ancestor",
                    "--end-of-options",
                    tip,
                    &format!("refs/heads/{target}"),
                ],
            )
            .is_ok_and(|out| out.status.success()),
            _ => false,
        };
    if contained {
        reason = format!(
            "{reason}; already in {}",
            job.project_branch.unwrap_or_default()
        );
    }
    // A kept worktree is the job's: git there runs whatever the job planted (hooks, fsmonitor), so
    // the way back in is another sandboxed session, not a plain `cd`.
    let handoff = if !removed && exists {
        let policy = job
            .policy
            .map(|p| format!(" --policy {}", shell_quote(Path::new(p))))
            .unwrap_or_default();
        Some(format!(
            "isolate run --resume {}{policy} -- \"$SHELL\"",
            job.id
        ))
    } else if branch_kept && commits > 0 && !contained {
        Some(format!(
            "git -C {} merge --no-ff {branch}",
            shell_quote(&job.project.top)
        ))
    } else {
        None
    };
    if let Some(why) = failed {
        outcome = Outcome {
            action: Action::Keep,
            branch: outcome.branch.map(|_| BranchAction::Keep),
            reason: why,
        };
    } else if outcome.branch == Some(BranchAction::Delete) && branch_kept {
        outcome.branch = Some(BranchAction::Keep);
        outcome.reason = format!("{}; the branch moved, kept", outcome.reason);
    }
    let report = WorktreeReport {
        path: job.path.display().to_string(),
        branch,
        base: job.base.to_string(),
        repo: job.project.top.display().to_string(),
        commits,
        dirty: Dirty {
            modified: insp.map_or(0, |i| i.modified),
            untracked: insp.map_or(0, |i| i.untracked),
            conflicted: insp.map_or(0, |i| i.conflicted),
        },
        stash: insp.map_or(0, |i| i.stash_entries),
        other_refs: facts.unimported.clone(),
        in_progress: insp.map_or_else(Vec::new, |i| {
            i.in_progress.iter().map(|s| s.to_string()).collect()
        }),
        ignored: if removed { ignored } else { 0 },
        dispatch_dirty: job.dispatch_dirty,
        removed: removed || (!exists && matches!(verdict, Verdict::Remove { .. })),
        branch_kept,
        reason,
        handoff,
        branch_tip: if branch_kept {
            facts.branch_after.clone()
        } else {
            None
        },
        project_branch: job.project_branch.map(str::to_string),
    };
    Ok(Settled { report, outcome })
}

/// Deletes the base pin (when there is one) if it still points at base, and the branch when `tip`
/// names the value it must still have: both in one transaction, or one by one if that fails.
/// Returns whether the branch was deleted.
fn delete_refs(job: &Job, pin: bool, tip: Option<&str>) -> bool {
    let pin = if pin {
        format!("delete {} {}\n", pin_ref(job.id), job.base)
    } else {
        String::new()
    };
    let run = |stdin: &str| {
        stdin.is_empty()
            || git::run_with_input(
                &job.project.top,
                ["update-ref", "--stdin"],
                stdin.as_bytes(),
            )
            .is_ok()
    };
    let Some(tip) = tip else {
        run(&pin);
        return false;
    };
    let head = format!("delete refs/heads/{} {tip}\n", job.id.branch());
    if run(&format!("{pin}{head}")) {
        return true;
    }
    run(&pin);
    run(&head)
}

/// Reads the job's repository (in-process, executing nothing planted there), imports its branch
/// (unless only surveying), and checks its other refs and its standing against the project.
fn gather(job: &Job, look: Look) -> Facts {
    let branch = job.id.branch();
    let tree = if fs::symlink_metadata(job.path).is_ok() {
        Tree::Present(inspect_bounded(job.path, &branch))
    } else if job.removed {
        Tree::Removed
    } else {
        Tree::Missing
    };
    let (project_branch, pin) = match project_refs(job) {
        Ok(refs) => refs,
        Err(e) => (None, Some(format!("(unreadable: {e})"))),
    };
    let mut copied = false;
    let branch_state = match &tree {
        Tree::Present(Ok(insp)) => match &insp.branch_tip {
            Some(tip) => match project_branch.as_deref() {
                // Someone moved the project's branch while the job ran: never overwrite it.
                Some(current) if current != last_import(job) && current != tip => {
                    Branch::Unknown(format!(
                        "the project's {branch} moved to {current} (isolate left it at {}); not overwritten",
                        last_import(job)
                    ))
                }
                Some(current) if current == tip => counted(job, look, tip, None),
                _ if look == Look::Survey => {
                    if tip == job.base {
                        Branch::AtBase
                    } else {
                        Branch::ToImport
                    }
                }
                // Deleted in the project while the job ran: created again, so the work is not lost.
                current => {
                    let old = current.unwrap_or(ZERO);
                    let objects = job.path.join(".git/objects");
                    match import::import(job.project, &objects, &branch, tip, old, job.base) {
                        Ok(done) => {
                            copied = done.copied;
                            if done.copied {
                                note_import(job.job_dir, tip);
                            }
                            counted(job, look, tip, Some(done.commits))
                        }
                        Err(e) => Branch::Unknown(e.to_string()),
                    }
                }
            },
            None => Branch::Unknown(format!("the job deleted its branch {branch}")),
        },
        Tree::Present(Err(e)) => Branch::Unknown(e.clone()),
        // Without the directory, what the project's branch already holds is what counts.
        Tree::Missing | Tree::Removed => match project_branch.as_deref() {
            Some(tip) => counted(job, look, tip, None),
            None => Branch::Gone,
        },
    };
    // Whether a checkout holds the branch, asked only when the branch could go.
    let may_go = match &branch_state {
        Branch::AtBase => true,
        Branch::Commits {
            standing: Some(standing),
            ..
        } => job.settling.settles_landed() && standing.landed(),
        _ => false,
    };
    let branch_held = if may_go {
        match checkouts::holding(job.project, &format!("refs/heads/{branch}")) {
            Ok(held) => held.map(|h| h.to_string()),
            Err(e) => Some(format!(
                "perhaps checked out (cannot list the checkouts: {e})"
            )),
        }
    } else {
        None
    };
    let unimported = match &tree {
        Tree::Present(Ok(insp)) => {
            unimported_refs(job, insp).unwrap_or_else(|e| vec![format!("(cannot check: {e})")])
        }
        _ => Vec::new(),
    };
    let branch_after = match (&tree, &branch_state) {
        (Tree::Present(Ok(insp)), Branch::AtBase | Branch::Commits { .. })
            if look == Look::Import =>
        {
            insp.branch_tip.clone()
        }
        _ => project_branch,
    };
    Facts {
        life: job.life,
        in_use: false,
        tree,
        branch: branch_state,
        copied,
        pin,
        branch_after,
        unimported,
        branch_held,
        settling: job.settling,
    }
}

/// The project's branch at `tip`: its commits beyond base (`commits` when the import counted them),
/// and, for `rm`, `prune` and a survey, where they stand against the project branch.
fn counted(job: &Job, look: Look, tip: &str, commits: Option<usize>) -> Branch {
    if tip == job.base {
        return Branch::AtBase;
    }
    let count = match commits {
        Some(n) => n,
        None => match import::count(job.project, job.base, tip) {
            Ok(n) => n,
            Err(e) => return Branch::Unknown(e.to_string()),
        },
    };
    if count == 0 {
        return Branch::AtBase;
    }
    let standing = match job.project_branch {
        Some(target) if job.settling.settles_landed() || look == Look::Survey => {
            let target = format!("refs/heads/{target}");
            match standing::standing(&job.project.top, &target, tip) {
                Ok(standing) => Some(standing),
                // No such project branch (deleted, or a typo in the record): nothing has landed.
                Err(_) if !ref_exists(job.project, &target) => None,
                Err(e) => return Branch::Unknown(e.to_string()),
            }
        }
        _ => None,
    };
    Branch::Commits { count, standing }
}

fn ref_exists(project: &Project, reference: &str) -> bool {
    git::try_run(
        &project.top,
        [
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            reference,
        ],
    )
    .is_ok_and(|out| out.status.success())
}

/// In the job directory: the tip isolate last set the project's branch to.
const BRANCH_TIP: &str = "branch-tip";

/// Notes that isolate set the project's branch of the job in `job_dir` to `tip`.
pub fn note_import(job_dir: &Path, tip: &str) {
    let _ = store::write_atomic(&job_dir.join(BRANCH_TIP), tip.as_bytes());
}

/// Where isolate last left the project's branch: the last tip it imported, else base.
fn last_import(job: &Job) -> String {
    std::fs::read_to_string(job.job_dir.join(BRANCH_TIP))
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| t.len() >= 40 && t.bytes().all(|b| b.is_ascii_hexdigit()))
        .unwrap_or_else(|| job.base.to_string())
}

/// The lock that serialises one job's imports (`isolate import`, `merge`, the supervisor's end).
fn import_lock(job_dir: &Path) -> Result<Lock> {
    Lock::exclusive(&job_dir.join("import.lock"))
}

/// `isolate import JOB`: the job's current commits onto the project's `isolate/<id>` now (also
/// while it runs). Returns the commits beyond base.
pub fn import_now(job: &Job) -> Result<usize> {
    let _lock = import_lock(job.job_dir)?;
    match gather(job, Look::Import).branch {
        Branch::Unknown(why) => Err(crate::error::Error::Refused(format!(
            "nothing imported: {why}"
        ))),
        branch => Ok(branch.commits()),
    }
}

/// The null object id: "the ref must not exist" for `update-ref`.
const ZERO: &str = "0000000000000000000000000000000000000000";

/// The project's values of the job's branch and base pin, in one read.
fn project_refs(job: &Job) -> Result<(Option<String>, Option<String>)> {
    let branch = format!("refs/heads/{}", job.id.branch());
    let pin = pin_ref(job.id);
    let out = git::run(
        &job.project.top,
        [
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "--",
            &branch,
            &pin,
        ],
    )?;
    let text = out.text();
    let value = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .map(str::to_string)
    };
    Ok((value(&branch), value(&pin)))
}

/// How long a read of the job's repository may take. The job could have swapped a file there for a
/// FIFO that blocks a reader forever; past this, the probe has not decided, and so it keeps.
const INSPECT_LIMIT: Duration = Duration::from_secs(120);

/// `inspect` on a thread of its own, given up on after `INSPECT_LIMIT` (the thread is left blocked;
/// the supervisor exits soon after).
pub fn inspect_bounded(path: &Path, branch: &str) -> std::result::Result<Inspection, String> {
    let (tx, rx) = mpsc::channel();
    let (path, branch) = (path.to_path_buf(), branch.to_string());
    thread::spawn(move || {
        let _ = tx.send(inspect::inspect(&path, &branch).map_err(|e| e.to_string()));
    });
    rx.recv_timeout(INSPECT_LIMIT).unwrap_or_else(|_| {
        Err(format!(
            "reading it took longer than {}s",
            INSPECT_LIMIT.as_secs()
        ))
    })
}

/// Other refs (and a detached HEAD) of the job whose commits the project does not have.
fn unimported_refs(job: &Job, insp: &Inspection) -> std::result::Result<Vec<String>, String> {
    let mut named: Vec<(String, String)> = insp.other_refs.clone();
    if insp.head_branch.is_none() {
        if let Some(head) = &insp.head_commit {
            named.push(("HEAD (detached)".into(), head.clone()));
        }
    }
    let ids: Vec<String> = named.iter().map(|(_, id)| id.clone()).collect();
    let missing = inspect::missing_from(&job.project.git_dir, &ids).map_err(|e| e.to_string())?;
    Ok(named
        .into_iter()
        .filter(|(_, id)| missing.contains(id))
        .map(|(name, _)| name)
        .collect())
}

/// The record's claims checked against the disk (spec/worktrees.md, "Records"): the directory sits
/// directly in the project's worktree directory under the job's id, the base pin isolate made holds
/// the record's base, and the repository borrows this project's objects.
pub fn validate(job: &Job, facts: &Facts) -> std::result::Result<(), String> {
    let expected: PathBuf = job.key_dir.join(job.id.as_str());
    let name = job
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if JobId::parse(name).as_ref() != Some(job.id) || job.path != expected {
        return Err(format!(
            "{} is not {}",
            job.path.display(),
            expected.display()
        ));
    }
    let pin_holds = match (&facts.tree, facts.pin.as_deref()) {
        (_, Some(pin)) => pin == job.base,
        // Removed with its worktree when the job ended.
        (Tree::Removed, None) => true,
        (_, None) => false,
    };
    if !pin_holds {
        return Err(format!(
            "the project's {} is {}, not the record's base {}",
            pin_ref(job.id),
            facts.pin.as_deref().unwrap_or("missing"),
            job.base
        ));
    }
    if !matches!(facts.tree, Tree::Present(_)) {
        return Ok(());
    }
    let meta = fs::symlink_metadata(job.path).map_err(|e| e.to_string())?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", job.path.display()));
    }
    let alternates = job.path.join(".git/objects/info/alternates");
    // The job wrote this file: a FIFO or a link there must not hang or redirect the check.
    let text = crate::textfile::read_untrusted(&alternates, 64 << 10)
        .map_err(|e| format!("{}: {e}", alternates.display()))?;
    let theirs =
        fs::canonicalize(text.trim_end_matches('\n')).map_err(|e| format!("alternates: {e}"))?;
    let ours = fs::canonicalize(&job.project.objects).map_err(|e| e.to_string())?;
    if theirs != ours {
        return Err(format!(
            "its alternates point at {}, not at the project",
            theirs.display()
        ));
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A job's worktree as its record names it, with what the record says checked against what isolate
/// computes itself (the project from the record's repository, the worktree directory from the
/// configuration): `rm`, `prune`, `import`, `merge`, `sync` and `worktrees` start here.
pub struct Recorded {
    pub project: Project,
    pub id: JobId,
    pub key_dir: PathBuf,
    pub job_dir: PathBuf,
    pub worktree: crate::job::record::WorktreeReport,
    /// What loads the job's policy again.
    pub policy: Option<String>,
    pub life: Life,
}

impl Recorded {
    pub fn open(state: &Path, record: &crate::job::record::Record) -> Result<Recorded> {
        use crate::error::Error;
        let worktree = record
            .worktree
            .clone()
            .ok_or_else(|| Error::Refused(format!("job {} has no worktree", record.id)))?;
        let id = JobId::parse(&record.id).ok_or_else(|| {
            Error::Refused(format!(
                "the record's id {:?} is not one isolate makes",
                record.id
            ))
        })?;
        let project = Project::discover(Path::new(&worktree.repo))?;
        // Where the worktree must be, computed from the project and configuration, never taken
        // from the record.
        let key_dir = crate::config::load(Some(&project))?
            .worktree_root(state, &project)?
            .join(project.key());
        let job_dir = if record.forgotten {
            store::forgotten_dir(state)
        } else {
            store::jobs_dir(state)
        }
        .join(id.as_str());
        Ok(Recorded {
            project,
            id,
            key_dir,
            job_dir,
            worktree,
            policy: record.sandbox.policy_ref.clone(),
            life: match record.effective_state() {
                State::Running => Life::Running,
                State::Lost => Life::Lost,
                State::Exited | State::Killed | State::TimedOut => Life::Ended,
            },
        })
    }

    /// The job's worktree, to be settled by `settling`.
    pub fn job(&self, settling: Settling) -> Job<'_> {
        Job {
            project: &self.project,
            id: &self.id,
            key_dir: &self.key_dir,
            path: Path::new(&self.worktree.path),
            base: &self.worktree.base,
            job_dir: &self.job_dir,
            life: self.life,
            removed: self.worktree.removed,
            settling,
            dispatch_dirty: self.worktree.dispatch_dirty,
            project_branch: self.worktree.project_branch.as_deref(),
            policy: self.policy.as_deref(),
        }
    }

    /// The record's worktree path, once checked: the one isolate would have made for this job.
    pub fn checked_path(&self) -> Result<&Path> {
        let path = Path::new(&self.worktree.path);
        if path != self.key_dir.join(self.id.as_str()) {
            return Err(crate::error::Error::Refused(format!(
                "the record of {} names {}, which is not where isolate puts its worktree; nothing done",
                self.id,
                path.display()
            )));
        }
        Ok(path)
    }
}
