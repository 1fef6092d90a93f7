//! THE cleanup decision of spec/worktrees.md ("When a job ends"): one predicate, `decide`, used by
//! every path that ends a job, and `settle`, which gathers the facts for it, imports first, and
//! deletes only what the decision allows, after checking the record against the disk and
//! re-checking the decision immediately before deleting. A probe that cannot decide keeps.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::error::Result;
use crate::git;
use crate::job::id::JobId;
use crate::job::record::{Dirty, WorktreeReport};
use crate::job::store;
use crate::worktree::create::pin_ref;
use crate::worktree::import;
use crate::worktree::inspect::{self, Inspection};
use crate::worktree::project::Project;
use crate::worktree::remove;

/// What is known about a worktree when its job ends.
#[derive(Debug)]
pub struct Facts {
    /// Another live job has this worktree as its own.
    pub in_use: bool,
    /// The directory is still there.
    pub exists: bool,
    /// The read of its repository, or why it could not be read.
    pub inspection: std::result::Result<Inspection, String>,
    /// Commits beyond base on the project's branch after the import, or why the import failed.
    pub import: std::result::Result<usize, String>,
    /// The import copied objects (it took time: the decision is taken again before deleting).
    pub copied: bool,
    /// The project's base pin, which must point at the record's base.
    pub pin: Option<String>,
    /// The project's branch after the import (the job's tip when it succeeded).
    pub branch_after: Option<String>,
    /// Other branches and tags of the job (and a detached HEAD) whose commits the project lacks.
    pub unimported: Vec<String>,
    /// `--keep`.
    pub keep: bool,
}

/// What happens to the worktree and to the project's branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The worktree stays as it is; so does the branch.
    Keep { reason: String },
    /// The directory is gone: the branch stays if it has commits; the pin goes.
    Missing { delete_branch: bool },
    /// Remove the worktree; keep the branch when it has commits beyond base.
    Remove { delete_branch: bool },
}

/// The predicate. Order matters: in use, missing, not readable, import failed, work in the tree, --keep, clean.
pub fn decide(facts: &Facts) -> Verdict {
    if facts.in_use {
        return Verdict::Keep {
            reason: "in use by another job".into(),
        };
    }
    if !facts.exists {
        let commits = *facts.import.as_ref().unwrap_or(&1);
        return Verdict::Missing {
            delete_branch: commits == 0,
        };
    }
    let insp = match &facts.inspection {
        Ok(insp) => insp,
        Err(why) => {
            return Verdict::Keep {
                reason: format!("cannot read the job's repository ({why})"),
            }
        }
    };
    let commits = match &facts.import {
        Ok(n) => *n,
        Err(why) => {
            return Verdict::Keep {
                reason: format!("import failed ({why})"),
            }
        }
    };
    let work = work_in_tree(insp, &facts.unimported);
    if !work.is_empty() {
        return Verdict::Keep {
            reason: work.join(", "),
        };
    }
    if facts.keep {
        return Verdict::Keep {
            reason: "--keep".into(),
        };
    }
    Verdict::Remove {
        delete_branch: commits == 0,
    }
}

/// Each kind of work that keeps a worktree, counted ("3 modified, 1 untracked, 1 stash entry").
fn work_in_tree(insp: &Inspection, unimported: &[String]) -> Vec<String> {
    let mut work = Vec::new();
    let mut count = |n: usize, one: &str, many: &str| {
        if n > 0 {
            work.push(format!("{n} {}", if n == 1 { one } else { many }));
        }
    };
    count(insp.modified, "modified", "modified");
    count(insp.untracked, "untracked", "untracked");
    count(insp.conflicted, "conflicted", "conflicted");
    count(insp.stash_entries, "stash entry", "stash entries");
    count(
        unimported.len(),
        "ref with commits not in the project",
        "refs with commits not in the project",
    );
    for op in &insp.in_progress {
        work.push(format!("{op} in progress"));
    }
    work
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
    pub keep: bool,
    pub dispatch_dirty: bool,
    /// The project's branch the job was started from.
    pub project_branch: Option<&'a str>,
    /// The job's policy (what loads it again), named in the handoff of a kept worktree.
    pub policy: Option<&'a str>,
}

/// Imports, decides, and carries out the decision; returns the worktree part of the report.
pub fn settle(job: &Job) -> Result<WorktreeReport> {
    let _lock = ImportLock::take(job.job_dir)?;
    let branch = job.id.branch();
    let mut facts = gather(job);
    let mut verdict = decide(&facts);
    if let Err(why) = validate(job, &facts) {
        verdict = Verdict::Keep {
            reason: format!("record does not match the disk: {why}; nothing deleted"),
        };
    }
    if matches!(verdict, Verdict::Remove { .. }) && facts.copied {
        // The import took a while: decide again on a fresh read, immediately before deleting.
        let again = gather(job);
        if decide(&again) != verdict {
            verdict = Verdict::Keep {
                reason: "the worktree changed while isolate was deciding".into(),
            };
        }
        facts = again;
    }

    let mut removed = false;
    let mut branch_kept = true;
    let ignored = facts.inspection.as_ref().map(|i| i.ignored).unwrap_or(0);
    let mut reason = match &verdict {
        Verdict::Keep { reason } => format!("kept: {reason}"),
        Verdict::Missing { .. } => "worktree directory is missing".to_string(),
        Verdict::Remove { .. } => "clean".to_string(),
    };
    let commits = facts.import.as_ref().copied().unwrap_or(0);
    if let Verdict::Missing { delete_branch } | Verdict::Remove { delete_branch } = verdict {
        if facts.exists {
            match remove::remove_tree(job.path) {
                Ok(()) => removed = true,
                Err(e) => reason = format!("kept: cannot remove the worktree: {e}"),
            }
        }
        if removed || !facts.exists {
            branch_kept = !delete_refs(job, delete_branch);
            reason = if branch_kept {
                format!(
                    "{reason}; branch kept: {commits} commit{} beyond base",
                    plural(commits)
                )
            } else {
                format!("{reason}; branch deleted: no commits")
            };
        }
    }
    let insp = facts.inspection.as_ref().ok();
    // Whether the project branch the job started from has its commits already.
    let contained = branch_kept
        && commits > 0
        && match (job.project_branch, &facts.branch_after) {
            (Some(target), Some(tip)) => git::try_run(
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
    let handoff = if !removed && facts.exists {
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
    Ok(WorktreeReport {
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
        removed,
        branch_kept,
        reason,
        handoff,
        branch_tip: if branch_kept {
            facts.branch_after.clone()
        } else {
            None
        },
        project_branch: job.project_branch.map(str::to_string),
    })
}

/// Deletes the base pin, and the branch when `branch` is true, each only if it still points at base:
/// both in one transaction, or one by one if that fails. Returns whether the branch was deleted.
fn delete_refs(job: &Job, branch: bool) -> bool {
    let pin = format!("delete {} {}\n", pin_ref(job.id), job.base);
    let head = format!("delete refs/heads/{} {}\n", job.id.branch(), job.base);
    let run = |stdin: &str| {
        git::run_with_input(
            &job.project.top,
            ["update-ref", "--stdin"],
            stdin.as_bytes(),
        )
        .is_ok()
    };
    if !branch {
        run(&pin);
        return false;
    }
    if run(&format!("{pin}{head}")) {
        return true;
    }
    run(&pin);
    run(&head)
}

/// Reads the job's repository (in-process, executing nothing planted there), imports its branch,
/// and checks its other refs against the project.
fn gather(job: &Job) -> Facts {
    let branch = job.id.branch();
    let exists = fs::symlink_metadata(job.path).is_ok();
    let inspection = if exists {
        inspect_bounded(job.path, &branch)
    } else {
        Err("the directory is missing".into())
    };
    let (project_branch, pin) = match project_refs(job) {
        Ok(refs) => refs,
        Err(e) => (None, Some(format!("(unreadable: {e})"))),
    };
    let mut copied = false;
    let import = match (&inspection, &project_branch) {
        (Ok(insp), _) => match &insp.branch_tip {
            Some(tip) => match project_branch.as_deref() {
                // Someone moved the project's branch while the job ran: never overwrite it.
                Some(current) if current != last_import(job) && current != tip => Err(format!(
                    "the project's {branch} moved to {current} (isolate left it at {}); not overwritten",
                    last_import(job)
                )),
                // Deleted in the project while the job ran: created again, so the work is not lost.
                current => {
                    let old = current.unwrap_or(ZERO);
                    import::import(job.project, &job.path.join(".git/objects"), &branch, tip, old, job.base)
                        .map(|done| {
                            copied = done.copied;
                            if done.copied {
                                let _ = store::write_atomic(&job.job_dir.join(BRANCH_TIP), tip.as_bytes());
                            }
                            done.commits
                        })
                        .map_err(|e| e.to_string())
                }
            },
            None => Err(format!("the job deleted its branch {branch}")),
        },
        // Without the directory, what the project's branch already holds is what counts.
        (Err(_), Some(tip)) if !exists => {
            import::count(job.project, job.base, tip).map_err(|e| e.to_string())
        }
        (Err(_), None) if !exists => Ok(0),
        (Err(e), _) => Err(e.clone()),
    };
    let unimported = match &inspection {
        Ok(insp) => {
            unimported_refs(job, insp).unwrap_or_else(|e| vec![format!("(cannot check: {e})")])
        }
        Err(_) => Vec::new(),
    };
    let branch_after = match (&import, &inspection) {
        (Ok(_), Ok(insp)) if insp.branch_tip.is_some() => insp.branch_tip.clone(),
        _ => project_branch,
    };
    Facts {
        in_use: false,
        exists,
        inspection,
        import,
        copied,
        pin,
        branch_after,
        unimported,
        keep: job.keep,
    }
}

/// In the job directory: the tip isolate last set the project's branch to.
const BRANCH_TIP: &str = "branch-tip";

/// Where isolate last left the project's branch: the last tip it imported, else base.
fn last_import(job: &Job) -> String {
    std::fs::read_to_string(job.job_dir.join(BRANCH_TIP))
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| t.len() >= 40 && t.bytes().all(|b| b.is_ascii_hexdigit()))
        .unwrap_or_else(|| job.base.to_string())
}

/// An exclusive lock on one job's imports (`flock` on `import.lock`), so that `isolate import`
/// and the supervisor's end never import at the same time. Released when dropped.
struct ImportLock {
    _file: std::fs::File,
}

impl ImportLock {
    fn take(job_dir: &Path) -> Result<ImportLock> {
        let path = job_dir.join("import.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| crate::error::Error::io("cannot open", &path, e))?;
        // SAFETY: flock on a descriptor we own; blocks until the other holder is done.
        if unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&file), libc::LOCK_EX) } != 0 {
            return Err(crate::error::Error::io(
                "cannot lock",
                &path,
                std::io::Error::last_os_error(),
            ));
        }
        Ok(ImportLock { _file: file })
    }
}

/// `isolate import JOB`: the job's current commits onto the project's `isolate/<id>` now (also
/// while it runs). Returns the commits beyond base.
pub fn import_now(job: &Job) -> Result<usize> {
    let _lock = ImportLock::take(job.job_dir)?;
    let facts = gather(job);
    facts
        .import
        .map_err(|why| crate::error::Error::Refused(format!("nothing imported: {why}")))
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
fn inspect_bounded(path: &Path, branch: &str) -> std::result::Result<Inspection, String> {
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
    if facts.pin.as_deref() != Some(job.base) {
        return Err(format!(
            "the project's {} is {}, not the record's base {}",
            pin_ref(job.id),
            facts.pin.as_deref().unwrap_or("missing"),
            job.base
        ));
    }
    if !facts.exists {
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

/// A path as a shell word: bare when safe, else in single quotes.
pub fn shell_quote(path: &Path) -> String {
    let s = path.to_string_lossy();
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        return s.into_owned();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
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
        let job_dir = store::jobs_dir(state).join(id.as_str());
        Ok(Recorded {
            project,
            id,
            key_dir,
            job_dir,
            worktree,
            policy: record.sandbox.policy_ref.clone(),
        })
    }

    pub fn job(&self, keep: bool) -> Job<'_> {
        Job {
            project: &self.project,
            id: &self.id,
            key_dir: &self.key_dir,
            path: Path::new(&self.worktree.path),
            base: &self.worktree.base,
            job_dir: &self.job_dir,
            keep,
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

/// The cleanup decision for a job that has ended, from its record (`rm`, `prune`): the record's
/// claims are checked against the disk as always, and `--keep` no longer applies.
pub fn settle_recorded(
    state: &Path,
    record: &crate::job::record::Record,
) -> Result<WorktreeReport> {
    let recorded = Recorded::open(state, record)?;
    settle(&recorded.job(false))
}
