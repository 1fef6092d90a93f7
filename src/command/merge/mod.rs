//! `isolate merge JOB… [--all] [--keep-going] [--yes] [--json]`: brings jobs home one after another,
//! in the order given (`--all`: every job of this project, oldest first: those still running are
//! listed as such, those with nothing to merge too), and stops at the first that does not merge
//! (with `--keep-going`, goes on to the next), saying which merged, which conflicted (with the
//! command that resolves it) or failed, and which were not tried. Each job's merge is `worktree::merge`: shown, asked for unless `--yes`,
//! computed in the project from objects alone, fast-forwarded only from what was shown; a conflict
//! is left in the job's worktree (made again when it was removed).

mod preview;

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::cli::MergeArgs;
use crate::command::print_json;
use crate::controls;
use crate::error::{Error, Result};
use crate::git::project::Project;
use crate::job::record::Record;
use crate::job::{store, worktrees};
use crate::words::plural;
use crate::worktree::cleanup::Recorded;
use crate::worktree::merge::{self, Landing, Plan};

/// What became of one job.
#[derive(Debug, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
enum Outcome {
    Merged {
        commit: String,
        commits: usize,
        files: Vec<String>,
    },
    /// The project branch had all of it already: nothing changed.
    AlreadyIn,
    /// Left in the job's worktree, for the user to resolve.
    Conflicted {
        worktree: PathBuf,
        files: Vec<String>,
        recreated: bool,
        /// The commands that resolve it: a shell in the job's worktree, then the merge again.
        resolve: String,
    },
    /// Still running (`--all`): not merged.
    Running,
    /// Refused or failed before anything changed.
    Failed { reason: String },
    /// After a job that did not merge: not looked at.
    NotTried,
}

#[derive(Debug, Serialize)]
struct Job {
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    branch: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    into: Option<String>,
    /// The project the job belongs to (its top level).
    project: PathBuf,
    #[serde(flatten)]
    outcome: Outcome,
}

/// `--json`: each job in order, and the same as lists of ids.
#[derive(Debug, Serialize)]
struct Summary<'a> {
    jobs: &'a [Job],
    merged: Vec<&'a str>,
    already_in: Vec<&'a str>,
    conflicted: Vec<&'a str>,
    failed: Vec<&'a str>,
    running: Vec<&'a str>,
    not_tried: Vec<&'a str>,
}

pub fn run(args: MergeArgs) -> Result<i32> {
    let jobs = merge_all(&args)?;
    let ok = jobs.iter().all(|j| {
        matches!(
            j.outcome,
            Outcome::Merged { .. } | Outcome::AlreadyIn | Outcome::Running
        )
    });
    if args.json {
        let ids = |f: fn(&Outcome) -> bool| {
            jobs.iter()
                .filter(|j| f(&j.outcome))
                .map(|j| j.id.as_str())
                .collect()
        };
        let summary = Summary {
            jobs: &jobs,
            merged: ids(|o| matches!(o, Outcome::Merged { .. })),
            already_in: ids(|o| matches!(o, Outcome::AlreadyIn)),
            conflicted: ids(|o| matches!(o, Outcome::Conflicted { .. })),
            failed: ids(|o| matches!(o, Outcome::Failed { .. })),
            running: ids(|o| matches!(o, Outcome::Running)),
            not_tried: ids(|o| matches!(o, Outcome::NotTried)),
        };
        let status = print_json(&summary)?;
        return Ok(if ok { status } else { 1 });
    }
    if jobs.is_empty() || jobs.iter().all(|j| matches!(j.outcome, Outcome::AlreadyIn)) {
        say!("isolate: nothing to merge");
    } else if jobs.len() > 1 {
        summarize(&jobs);
    }
    Ok(if ok { 0 } else { 1 })
}

/// The jobs named (or, with `--all`, chosen), merged in order up to the first that does not merge.
fn merge_all(args: &MergeArgs) -> Result<Vec<Job>> {
    merge::require_git()?;
    let state = store::state_dir()?;
    // clap has made sure there are job names or --all, never both.
    let chosen: Vec<(PathBuf, Record)> = if args.all {
        all_of_this_project(&state)?
    } else {
        args.jobs
            .iter()
            .map(|query| store::resolve(&state, query))
            .collect::<Result<_>>()?
    };
    let mut done = Vec::new();
    let mut stopped = false;
    let total = chosen.len();
    // A line per job on a terminal when there are several: which one of how many is being merged.
    crate::sys::progress::want(!args.json);
    let progress = total > 1 && crate::sys::progress::wanted();
    for (n, (dir, record)) in chosen.into_iter().enumerate() {
        let mut job = Job {
            id: record.id.clone(),
            name: record.name.clone(),
            branch: format!("isolate/{}", record.id),
            into: record
                .worktree
                .as_ref()
                .and_then(|wt| wt.project_branch.clone()),
            project: crate::job::project::of(&record),
            outcome: Outcome::NotTried,
        };
        let now = record.effective_state();
        if args.all && !now.ended() {
            job.outcome = Outcome::Running;
            if !args.json {
                say!("isolate: {} is still {now}: not merged", job.id);
            }
            done.push(job);
            continue;
        }
        if stopped {
            done.push(job);
            continue;
        }
        if progress {
            say!("isolate: [{}/{total}] {}", n + 1, job.branch);
        }
        job.outcome = match merge_one(&state, &dir, &record, args) {
            Ok(outcome) => outcome,
            Err(e) => Outcome::Failed {
                reason: e.to_string(),
            },
        };
        match &job.outcome {
            // `--all` chose the job for unmerged commits it turned out not to have: listed, quietly.
            Outcome::AlreadyIn if args.all => {}
            // With --json, stdout is the summary's.
            Outcome::AlreadyIn | Outcome::Merged { .. } if args.json => {}
            Outcome::AlreadyIn => out!(
                "{} already has the work of {}; nothing merged",
                job.into.as_deref().unwrap_or("the project branch"),
                job.branch
            )?,
            Outcome::Merged {
                commit, commits, ..
            } => out!(
                "{} is now at {} ({} of {})",
                job.into.as_deref().unwrap_or_default(),
                &commit[..12.min(commit.len())],
                plural(*commits, "commit", "commits"),
                job.branch
            )?,
            Outcome::Conflicted {
                worktree,
                files,
                resolve,
                ..
            } => {
                stopped = !args.keep_going;
                say!(
                    "isolate: merging {} into {} conflicts in {}; the merge is in {} (resolve it: {resolve})",
                    job.into.as_deref().unwrap_or_default(),
                    job.branch,
                    controls::name(&files.join(", ")),
                    worktree.display(),
                );
            }
            Outcome::Failed { reason } => {
                stopped = !args.keep_going;
                say!("isolate: {}: {reason}", job.id);
            }
            Outcome::NotTried | Outcome::Running => {}
        }
        done.push(job);
    }
    Ok(done)
}

/// One job: previewed, asked for, merged.
fn merge_one(
    state: &std::path::Path,
    dir: &std::path::Path,
    record: &Record,
    args: &MergeArgs,
) -> Result<Outcome> {
    let now = record.effective_state();
    if !now.ended() {
        return Err(Error::Job {
            job: record.id.to_string(),
            why: format!("is {now}: merge an ended job"),
        });
    }
    let recorded = Recorded::open(state, record)?;
    let policy = crate::command::recorded_policy(record)?;
    let preview = match merge::preview(&recorded)? {
        Plan::AlreadyIn { .. } => return Ok(Outcome::AlreadyIn),
        Plan::Merge(preview) => preview,
    };
    preview::show(&recorded, &preview);
    if !args.yes && !confirm(&format!("Merge into {}? [y/N] ", preview.target))? {
        return Err(Error::NotConfirmed("not merged"));
    }
    let mut message = format!("Merge branch '{}'", recorded.id.branch());
    if let Some(name) = &record.name {
        message.push_str(&format!(" ({name})"));
    }
    Ok(
        match merge::land(&recorded, record, dir, &policy, &preview, &message)? {
            Landing::Landed { commit } => Outcome::Merged {
                commit,
                commits: preview.commits,
                files: preview.files(),
            },
            Landing::Conflicted {
                worktree,
                files,
                recreated,
            } => Outcome::Conflicted {
                worktree,
                files,
                recreated,
                resolve: format!(
                    "isolate run --resume {id} -- \"$SHELL\" (commit the merge there), then \
                     isolate merge {id}",
                    id = record.id
                ),
            },
        },
    )
}

/// Which merged, which did not, which were not tried (after more than one job).
fn summarize(jobs: &[Job]) {
    let list = |f: fn(&Outcome) -> bool| {
        let ids: Vec<&str> = jobs
            .iter()
            .filter(|j| f(&j.outcome))
            .map(|j| j.id.as_str())
            .collect();
        if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(", ")
        }
    };
    say!(
        "isolate: merged: {}; conflicted: {}; failed: {}; running: {}; not tried: {}",
        list(|o| matches!(o, Outcome::Merged { .. } | Outcome::AlreadyIn)),
        list(|o| matches!(o, Outcome::Conflicted { .. })),
        list(|o| matches!(o, Outcome::Failed { .. })),
        list(|o| matches!(o, Outcome::Running)),
        list(|o| matches!(o, Outcome::NotTried))
    );
}

/// Every job of the project the caller is in whose branch may hold unmerged commits (its worktree
/// is there, or its branch is) or that still runs, oldest first.
fn all_of_this_project(state: &std::path::Path) -> Result<Vec<(PathBuf, Record)>> {
    let cwd = std::env::current_dir().map_err(|e| Error::io("cannot read", ".", e))?;
    // Found from paths before git runs here: a job's worktree is the job's, config included.
    if let Some(written) = worktrees::of_another_job(&cwd, state) {
        return Err(Error::Usage(format!(
            "{written}: `merge --all` merges the jobs of the project it is run in; run it in the \
             project"
        )));
    }
    let here = Project::discover(&cwd)?;
    Ok(store::list(state)
        .into_iter()
        .filter(|(_, record)| {
            record.worktree.as_ref().is_some_and(|wt| {
                wt.project_branch.is_some()
                    && std::path::Path::new(&wt.repo) == here.top
                    && (!wt.removed || wt.branch_kept)
            })
        })
        .collect())
}

/// Asks on the terminal; without one, the answer must come as --yes.
fn confirm(question: &str) -> Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Error::NotConfirmed(
            "not asking without a terminal: pass --yes to merge",
        ));
    }
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    stdin
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Error::io("cannot read the answer", "stdin", e))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
