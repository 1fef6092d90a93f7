//! The job's sandbox for this run: its plan built from its policy (and the one narrowing it, on
//! `--resume --policy`), with what isolate itself needs the job to read (the project its worktree
//! borrows from) and write (its TMPDIR), and the state its agent profile carries over.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::git::project::Project;
use crate::job::record::SandboxReport;
use crate::sandbox::{agent, plan, seed};

use super::network::add_allow_net;
use super::options::RunOptions;
use super::prepared::Prepared;

/// The sandbox as built.
pub(super) struct Confinement {
    /// `None` with `--no-sandbox`.
    pub(super) rules: Option<plan::Rules>,
    pub(super) report: SandboxReport,
    /// For the start line.
    pub(super) notes: Vec<String>,
}

/// What a job in a worktree of `project` reads whatever its policy says: the project its worktree
/// borrows from (top, caller's checkout, git directory, objects, hooks), and the object stores the
/// project itself borrows (a project that is a job's worktree borrows the real project's).
pub(super) fn project_readable(project: &Project) -> Vec<PathBuf> {
    [
        project.top.clone(),
        project.caller_top.clone(),
        project.git_dir.clone(),
        project.objects.clone(),
        project.hooks.clone(),
    ]
    .into_iter()
    .chain(crate::git::borrowed(&project.objects))
    .collect()
}

pub(super) fn confine(options: &RunOptions, prepared: &mut Prepared) -> Result<Confinement> {
    // And the state of the jobs it starts itself (job/nest.rs).
    let nested = crate::job::nest::make_state(&prepared.job_dir).map_err(|e| {
        Error::io(
            "cannot create",
            crate::job::nest::state_of(&prepared.job_dir),
            e,
        )
    })?;
    let writable = [prepared.tmpdir.clone(), nested];
    // Readable whatever the policy says (strict): the project the worktree borrows from.
    let readable: Vec<PathBuf> = match &prepared.worktree {
        Some(wt) => project_readable(&wt.project),
        None => vec![prepared.cwd.clone()],
    };
    let installation = prepared
        .executable
        .as_deref()
        .map(|exe| agent::installation(exe, std::env::var_os("HOME").as_deref().map(Path::new)))
        .unwrap_or_default();
    let job = plan::Job {
        worktree: prepared
            .worktree
            .as_ref()
            .map(|wt| wt.created.path.as_path()),
        writable: &writable,
        readable: &readable,
        allow_write: &options.allow_write,
        installation: &installation,
    };
    add_allow_net(&options.allow_net, &mut prepared.policy)?;
    let built = plan::build(&prepared.policy, &job, !options.sandboxed)?;
    prepared.made.extend(built.made);
    if let Some(rules) = &built.rules {
        // For the jobs this one starts: what to carve where its domain lists nothing.
        let granted = [
            &rules.read,
            &rules.list,
            &rules.write,
            &rules.worktree,
            &rules.write_files,
        ];
        let paths = granted.into_iter().flatten().map(PathBuf::as_path);
        crate::job::nest::write_grants(&writable[1], paths)?;
    }
    let mut confinement = Confinement {
        rules: built.rules,
        report: built.report,
        notes: built.notes,
    };
    // The state the job's agent profile carries over, before anything of the job runs.
    let seeds = &prepared.policy.policy.filesystem.seed;
    confinement
        .notes
        .extend(seed::carry(seeds, &mut prepared.made));
    // `--resume` with another --policy: the job is held to both.
    if let Some(extra) = &prepared.narrowing {
        let built = plan::build(extra, &job, !options.sandboxed)?;
        prepared.made.extend(built.made);
        confinement.rules = match (confinement.rules, built.rules) {
            (Some(rules), Some(more)) => Some(rules.narrowed_by(more)),
            (rules, _) => rules,
        };
        let sandbox = &mut confinement.report;
        sandbox.policy = format!("{} narrowed by {}", sandbox.policy, built.report.policy);
        sandbox.gaps.push(format!(
            "the gaps above are the job's policy's; policy {} narrows it (what it refuses is refused too)",
            built.report.policy
        ));
        confinement.notes.extend(built.notes);
    }
    // Inside a job, before anything of the job's is made: no supervisor of this job's own judges
    // its connects (job/nest.rs).
    let unnestable = confinement
        .rules
        .as_ref()
        .and_then(|r| r.sockets.as_ref())
        .and_then(|s| s.unnestable());
    if let (Some(why), Some(_)) = (unnestable, crate::job::nest::outer()) {
        return Err(Error::Usage(why.into()));
    }
    Ok(confinement)
}
