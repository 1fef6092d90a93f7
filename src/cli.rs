//! The command line, as clap derive types. The doc comments are the help text; nothing here runs.

use crate::error::Error;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

/// Run AI coding agents in a fresh git worktree, confined by Landlock, supervised to the end.
#[derive(Debug, Parser)]
#[command(name = "isolate", version, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// One value per process, parsed once: the size of `Run`'s arguments costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run CMD sandboxed (in a fresh worktree with --worktree).
    Run(RunArgs),
    /// Jobs: queued and running ones; --all adds ended ones still on record.
    Ps(PsArgs),
    /// One job: command, state, exit, worktree state, handoff.
    Status(JobArgs),
    /// A background job's captured output.
    Logs(LogsArgs),
    /// Block until JOB ends (queued ones too); exit with its exit status.
    Wait(WaitArgs),
    /// SIGTERM the job's whole process tree, SIGKILL after the grace period (a queued job: never run).
    Stop(StopArgs),
    /// Forget an ended job (refuses while work would be lost).
    Rm(RmArgs),
    /// Managed worktrees and their state marks.
    Worktrees(WorktreesArgs),
    /// Remove managed worktrees that hold nothing; say why others stay.
    Prune(PruneArgs),
    /// Bring a job's commits into the project's isolate/<id> branch now.
    Import(ImportArgs),
    /// Bring a job's branch into the project branch (merged in the job's worktree first, sandboxed).
    Merge(MergeArgs),
    /// Bring the project branch into a job's worktree (never touches the project).
    Sync(ImportArgs),
    /// What this kernel and git enforce, and every gap that remains.
    Doctor(DoctorArgs),
    /// Run CMD in a running (or kept) job's worktree, in the job's sandbox; it ends with the job.
    Exec(ExecArgs),
    /// Connect this terminal to a running job's own (started with --tty); detach and it runs on.
    Attach(AttachArgs),
    /// Policy profiles.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// A completion script for SHELL on stdout (job ids complete from the state directory).
    Completions(CompletionsArgs),
    /// The manual page (roff) on stdout: `isolate man | man -l -`; `isolate man run` for a command's.
    Man(ManArgs),
    /// The ids and names of the jobs on record, one per line (for the completion scripts).
    #[command(name = "__complete-jobs", hide = true)]
    CompleteJobs,
}

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// A job id, a unique prefix of one, or a job's name.
    #[arg(value_parser = job_query)]
    pub job: String,
    /// The key that, pressed twice, detaches (pressed once and then another key, both go to the
    /// job): ctrl- and a letter or one of @ [ \ ] ^ _.
    #[arg(long, value_name = "KEY", default_value = "ctrl-\\")]
    pub detach_key: String,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// A job id, a unique prefix of one, or a job's name.
    #[arg(value_parser = job_query)]
    pub job: String,
    /// Pass the user's terminal through instead of giving CMD a terminal of its own.
    #[arg(long)]
    pub no_pty: bool,
    /// Stop CMD after DUR (90s, 15m, 2h): SIGTERM to its tree, SIGKILL 10s later.
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// The command to run, after `--`.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// A command's page (isolate-COMMAND(1)) instead of isolate(1).
    pub command: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct PsArgs {
    /// Also list ended jobs still on record.
    #[arg(long, short)]
    pub all: bool,
    /// Every project's jobs (inside a project, only its own are shown; outside one, all).
    #[arg(long)]
    pub all_projects: bool,
    /// An array of reports instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct JobArgs {
    /// A job id, a unique prefix of one, or a job's name.
    #[arg(value_parser = job_query)]
    pub job: String,
    /// The job's report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// A job id, a unique prefix of one, or a job's name.
    #[arg(value_parser = job_query)]
    pub job: String,
    /// Keep printing new output until the job ends.
    #[arg(long, short)]
    pub follow: bool,
    /// Only the last N lines.
    #[arg(long, value_name = "N")]
    pub tail: Option<usize>,
    /// Print control characters as the job wrote them, even to a terminal (by default a terminal
    /// gets them escaped, `^[` for ESC: the job's escape sequences could retitle windows, clear the
    /// screen or write the clipboard).
    #[arg(long)]
    pub raw: bool,
    /// The job's network decisions instead (its proxy's `net.log`, one JSON object per line:
    /// time, method, host, port, allowed or refused and why, bytes), foreground jobs included.
    #[arg(long)]
    pub net: bool,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Job ids, unique prefixes of them, or job names.
    #[arg(value_name = "JOB", required_unless_present = "all", value_parser = job_query)]
    pub jobs: Vec<String>,
    /// Every running or queued job of the project this is run in.
    #[arg(long, conflicts_with = "jobs")]
    pub all: bool,
    /// Machine-readable output: each job's record, one JSON line as it ends.
    #[arg(long)]
    pub json: bool,
    /// Give up after DUR (90s, 15m, 2h): exit 124, the jobs still running left alone.
    #[arg(long, value_parser = parse_duration)]
    pub timeout: Option<Duration>,
}

#[derive(Debug, Args)]
pub struct StopArgs {
    /// A job id, a unique prefix of one, or a job's name.
    #[arg(value_parser = job_query)]
    pub job: String,
    /// Time between SIGTERM and SIGKILL.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "10s")]
    pub grace: Duration,
}

#[derive(Debug, Args)]
pub struct RmArgs {
    /// A job id, a unique prefix of one, or a job's name.
    #[arg(value_parser = job_query)]
    pub job: String,
    /// Stop a running job and forget the record; a worktree holding work stays on disk, untouched.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct WorktreesArgs {
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Every project's jobs (inside a project, only its own are shown; outside one, all).
    #[arg(long)]
    pub all_projects: bool,
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Say what would be removed, remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Every project's jobs (inside a project, only its own are shown; outside one, all).
    #[arg(long)]
    pub all_projects: bool,
    /// Empty the jobs' caches instead (package and build caches under the state directory), but
    /// a project's while a job of it runs.
    #[arg(long)]
    pub caches: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A job id, a unique prefix of one, or a job's name.
    #[arg(value_parser = job_query)]
    pub job: String,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Job ids, unique prefixes of them, or job names, merged in this order.
    #[arg(value_name = "JOB", required_unless_present = "all", value_parser = job_query)]
    pub jobs: Vec<String>,
    /// Every job of this project, oldest first: those with unmerged commits merged, those still
    /// running listed as such.
    #[arg(long, conflicts_with = "jobs")]
    pub all: bool,
    /// Go on past a job that conflicts or fails, to the next: every job that merges cleanly is
    /// merged (the project is never half-merged: each merge is whole or not at all).
    #[arg(long)]
    pub keep_going: bool,
    /// Do not ask before fast-forwarding the project branch.
    #[arg(long, short)]
    pub yes: bool,
    /// Machine-readable output: each job's outcome, in order.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// A policy profile fully resolved: every path and right, network, scopes, variables, limits, gaps.
    Show(PolicyShowArgs),
}

#[derive(Debug, Args)]
pub struct PolicyShowArgs {
    /// A built-in profile name, a user profile name, or a TOML file (default: default).
    #[arg(value_name = "NAME|FILE", default_value = "default")]
    pub policy: String,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Create a fresh worktree (a shared clone on branch isolate/<id>) and run CMD in it.
    #[arg(long)]
    pub worktree: bool,

    /// Run CMD in the kept worktree of an ended job (same id, same branch, same end-of-job rules).
    #[arg(
        long,
        value_name = "JOB",
        conflicts_with_all = ["worktree", "base", "name"],
        value_parser = job_query
    )]
    pub resume: Option<String>,

    /// Detach: print the job id (or its JSON with --json) once CMD runs, or once it is queued
    /// (max_running in the configuration); output goes to the job's log.
    #[arg(long)]
    pub bg: bool,

    /// Pass the user's terminal through instead of giving the job a terminal of its own.
    #[arg(long)]
    pub no_pty: bool,

    /// A terminal of its own held by its background supervisor, which keeps the screen: with --bg,
    /// attach later (`isolate attach JOB`); without, attached at once. Detach with Ctrl-\ Ctrl-\;
    /// the job runs on.
    #[arg(long, conflicts_with = "no_pty")]
    pub tty: bool,

    /// Human name of the job; the id and branch are derived from it (slug-4hex).
    #[arg(long, value_name = "NAME", value_parser = clap::value_parser!(std::ffi::OsString))]
    pub name: Option<std::ffi::OsString>,

    /// Commit to cut the worktree from (default: HEAD of the current checkout, or the `base`
    /// setting); `fresh`: the default branch of the remote origin, fetched first.
    #[arg(long, value_name = "REV", requires = "worktree")]
    pub base: Option<String>,

    /// Cut the worktree from a pull or merge request's head, fetched from origin: N, #N, or its
    /// GitHub or GitLab URL.
    #[arg(
        long,
        value_name = "PR",
        requires = "worktree",
        conflicts_with = "base"
    )]
    pub pr: Option<crate::git::remote::PullRequest>,

    /// Stop the job after DUR (90s, 15m, 2h; default: the policy's timeout): SIGTERM to its tree,
    /// SIGKILL after --grace.
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub timeout: Option<Duration>,

    /// The most memory the job's whole tree may use (512M, 2G), swap none: past it the kernel
    /// kills the job, which ends `out_of_memory` (default: the policy's, else the configuration's).
    #[arg(long, value_name = "SIZE", value_parser = parse_memory)]
    pub memory: Option<u64>,

    /// Once the job's commits are home, push its branch `isolate/<id>` to REMOTE (a remote of the
    /// project, or a URL), from the project, with your git credentials, outside the sandbox
    /// (default: the configuration's `push`). A failed push keeps everything and says so.
    #[arg(long, value_name = "REMOTE", value_parser = parse_remote)]
    pub push: Option<String>,

    /// The CPUs the job's whole tree may use at once (1.5: one and a half).
    #[arg(long, value_name = "N", value_parser = parse_cpus)]
    pub cpus: Option<u64>,

    /// The most processes and threads the job's tree may have at once.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub pids: Option<u64>,

    /// Time between SIGTERM and SIGKILL when stopping.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "10s")]
    pub grace: Duration,

    /// Sandbox policy: a built-in or user profile name, or a TOML file (see isolate policy show).
    /// Default: the project's or user's configured policy; else the agent's own profile when CMD
    /// is a known agent (claude-code, codex, aider, opencode, gemini); else `default`.
    #[arg(long, value_name = "NAME|FILE")]
    pub policy: Option<String>,

    /// One more writable path for this run (repeatable).
    #[arg(long = "allow-write", value_name = "PATH")]
    pub allow_write: Vec<PathBuf>,

    /// One more destination the job may reach through its network proxy, `NAME`, `*.DOMAIN`, or an
    /// address (`127.0.0.1`, `[::1]`), either with `:PORT` (without: 443 and 80), for this run
    /// (repeatable). One that names a local destination (`localhost:11434`, a gateway) allows
    /// exactly it. Under a policy without an allowlist (`default`: TCP open) the run's network
    /// becomes exactly these; `offline` stays offline.
    #[arg(long = "allow-net", value_name = "DEST")]
    pub allow_net: Vec<String>,

    /// Run without Landlock, on purpose; stated in the start line and the report.
    #[arg(long)]
    pub no_sandbox: bool,

    /// Never remove the worktree when the job ends.
    #[arg(long)]
    pub keep: bool,

    /// Set a variable for CMD (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_env)]
    pub env: Vec<(String, String)>,

    /// When the job ends, write its final JSON report to FILE (a path or /dev/fd/N).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// Machine-readable output from isolate itself: in the foreground one JSON line on stderr at
    /// the start and the final report at the end (stdout belongs to CMD); with --bg the job's
    /// record on stdout.
    #[arg(long)]
    pub json: bool,

    /// No human summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// The command to run, after `--`.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `--memory`: a size (`512M`, `2G`, bytes), at least 1 MiB.
fn parse_memory(s: &str) -> Result<u64, Error> {
    crate::words::parse_size(s)
        .filter(|&n| n >= 1 << 20)
        .ok_or_else(|| Error::Usage(format!("{s:?}: expected a size of 1M or more (512M, 2G)")))
}

/// `--push`: a remote's name or URL, never an option to git.
fn parse_remote(s: &str) -> Result<String, Error> {
    match s.is_empty() || s.starts_with('-') || s.contains('\0') {
        true => Err(Error::Usage(format!(
            "{s:?}: expected a remote's name or URL"
        ))),
        false => Ok(s.to_string()),
    }
}

/// `--cpus`: a positive number of CPUs, fractions allowed, in thousandths.
fn parse_cpus(s: &str) -> Result<u64, Error> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.01 && *n <= 10_000.0)
        .map(|n| (n * 1000.0).round() as u64)
        .ok_or_else(|| Error::Usage(format!("{s:?}: expected a number of CPUs (1, 0.5, 2.5)")))
}

fn parse_duration(s: &str) -> Result<Duration, Error> {
    crate::words::parse_duration(s)
        .map_err(|e| Error::Usage(format!("{e} (examples: 90s, 15m, 2h)")))
}

/// A job as the user names it: never empty, for an empty name is a prefix of every job's id (an
/// unset variable in `isolate rm "$JOB"` would name the one job there is).
fn job_query(s: &str) -> Result<String, Error> {
    match s.is_empty() {
        false => Ok(s.to_string()),
        true => Err(Error::Usage(
            "a job is named by its id, a unique prefix of one, or its name, not by nothing".into(),
        )),
    }
}

fn parse_env(s: &str) -> Result<(String, String), Error> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() && !k.contains('\0') && !v.contains('\0') => {
            Ok((k.to_string(), v.to_string()))
        }
        _ => Err(Error::Usage(format!("expected KEY=VALUE, got {s:?}"))),
    }
}
