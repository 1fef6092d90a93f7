//! The one error type of isolate. Each variant carries what failed and, where a user can act, a hint;
//! `main` prints the chain once. `exit_code` maps an error to the status of `docs/cli.md`: 125 for
//! isolate's own failures in `run`, 126/127 for a command that cannot be executed or is not found.

use std::io;
use std::path::PathBuf;

mod bound;
mod construct;
mod git;
mod hint;
mod setup;

pub use bound::ImportBound;
pub use git::GitProblem;
pub use setup::SetupFailure;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),

    #[error("not a git repository: {0}")]
    NotARepository(PathBuf),

    #[error(
        "the repository {0} has no commit yet; isolate needs a first commit to cut a worktree from"
    )]
    NoCommit(PathBuf),

    #[error("{what}: {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error("git {args} failed{}: {stderr}", .code.map(|c| format!(" (status {c})")).unwrap_or_default())]
    Git {
        args: String,
        code: Option<i32>,
        stderr: String,
    },

    // The sandbox layer's variants (src/sandbox/).
    #[error("sandbox unavailable: {0}")]
    SandboxUnavailable(String),

    #[error(
        "policy {policy} requires {feature}, which needs Landlock ABI {needs} (Linux {linux} or newer); \
         this kernel has Landlock ABI {abi} (the policy says [compatibility] {key} = \"required\")"
    )]
    FeatureUnavailable {
        policy: String,
        feature: &'static str,
        needs: u32,
        linux: &'static str,
        abi: u32,
        /// The key of the policy's `[compatibility]` table that makes it best effort.
        key: &'static str,
    },

    #[error(
        "policy {policy} requires the seccomp layer (unix sockets, udp, tcp bypasses), which isolate cannot \
         build here: {why} (the policy says [compatibility] seccomp = \"required\")"
    )]
    SeccompUnavailable { policy: String, why: &'static str },

    #[error("sandbox setup failed: {0}")]
    Sandbox(String),

    #[error("policy {source_name}: {message}")]
    Policy {
        source_name: String,
        message: String,
    },

    /// A step of the pre-exec helper's setup (rlimits, capabilities, Landlock, descriptors, the
    /// seccomp filter and its handover, the monitor's fork) or of building the seccomp filter
    /// failed: what the step was, and the system's answer.
    #[error("{step}: {source}")]
    SandboxStep {
        step: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// The kernel enforced less of a Landlock ruleset than the plan asked (`status` as
    /// rust-landlock reports it): the job must not start unconfined.
    #[error("the kernel enforced less than asked: {status}")]
    LandlockNotEnforced { status: String },

    /// The helper got no usable seccomp filter from the supervisor (`length` is what it announced:
    /// 0 when the supervisor could not build one).
    #[error("the supervisor could not build the seccomp filter")]
    SeccompFilterMissing { length: usize },

    /// A path as a policy writes it (`written`) cannot be expanded: a variable unset or empty, a
    /// lone `$`, an unclosed `${`.
    #[error("{why}")]
    PathExpansion { written: String, why: String },

    /// A `missing = "create"` path cannot be made: its nearest existing ancestor is not a
    /// directory (`errno` `None`), or isolate may not write it (`errno` says why).
    #[error("{}{}", .ancestor.display(), match .errno {
        Some(errno) => format!(": {}", errno.desc()),
        None => " is not a directory".to_string(),
    })]
    NotCreatable {
        ancestor: PathBuf,
        errno: Option<nix::errno::Errno>,
    },

    /// Making a `missing = "create"` path (or a parent of it) failed at `path`.
    #[error("cannot create {}: {source}", .path.display())]
    CannotCreate {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// An entry of `[network] allow` (or `--allow-net`) that is not a host name, and why.
    #[error("allow entry {entry:?} is not a host name: {why}")]
    NotAHostName { entry: String, why: &'static str },

    // The supervisor's variants (src/supervise/).
    #[error("{0}: command not found")]
    CommandNotFound(String),

    #[error("{cmd}: cannot execute: {reason}")]
    CommandNotExecutable { cmd: String, reason: String },

    /// A call into the kernel failed (a pipe, a socket pair, a fork, signal handlers, a temporary
    /// directory): what it was for, and the kernel's reason.
    #[error("{0}: {1}")]
    System(&'static str, #[source] io::Error),

    /// No block of `block` free TCP ports is left in `low`-`high`, the range `var` sets.
    #[error("no free block of {block} TCP ports in {low}-{high} (set {var})")]
    NoFreePorts {
        block: u16,
        low: u16,
        high: u16,
        var: &'static str,
    },

    /// The network proxy of a domain allowlist cannot listen on 127.0.0.1:`port`.
    #[error("cannot start the network proxy on 127.0.0.1:{port}: {source}")]
    ProxyStart {
        port: u16,
        #[source]
        source: io::Error,
    },

    /// The sandbox plan cannot be encoded for the pre-exec helper.
    #[error("{0}")]
    PlanEncoding(#[source] serde_json::Error),

    // The worktree layer's variants (src/worktree/).
    /// The import of a job's commits went over one of its bounds (memory, size): nothing moved.
    #[error(
        "the import of the job's commits went over its {bound} bound ({limit} bytes; {var} sets it); \
         nothing was imported and the worktree is kept"
    )]
    ImportOverBound {
        bound: ImportBound,
        limit: u64,
        var: &'static str,
    },
    /// The fetch of a starting point went over a bound (memory, size): nothing of it came in.
    #[error("the fetch of {what} went over its {bound} bound ({limit} bytes; {var} sets it)")]
    FetchOverBound {
        what: String,
        bound: ImportBound,
        limit: u64,
        var: &'static str,
    },
    /// A job cannot be taken as asked (it is running, it was lost, it has no kept worktree…).
    #[error("job {job} {why}")]
    Job { job: String, why: String },

    /// No job answers to what the user typed.
    #[error("no job matches {0:?} (see isolate ps --all)")]
    NoSuchJob(String),

    /// More than one job answers to what the user typed.
    #[error("{query:?} matches {} jobs: {}", .jobs.len(), .jobs.join(", "))]
    AmbiguousJob { query: String, jobs: Vec<String> },

    /// A job record that does not parse (a tampered or truncated file).
    #[error("{}: not a job record: {why}", .path.display())]
    NotARecord { path: PathBuf, why: String },

    /// A record names a job by an id isolate never makes.
    #[error("the record of {0} has an invalid id")]
    InvalidRecordId(String),

    /// Every id drawn for a new job was taken.
    #[error("could not find a free job id in {0} attempts")]
    NoFreeId(usize),

    /// Merging the project branch into a job's worktree stopped at conflicts (`sync`).
    #[error("merging {into} conflicts in {}; resolve them in {}", .files.join(", "), .worktree.display())]
    Conflict {
        into: String,
        files: Vec<String>,
        worktree: PathBuf,
    },

    /// git in a job's worktree (run sandboxed) failed.
    #[error("{what}: {stderr}")]
    WorktreeGit { what: &'static str, stderr: String },

    /// A run under this policy fails on this machine (`policy show`).
    #[error("a run with policy {policy} fails here: {problem}")]
    PolicyFails { policy: String, problem: String },

    /// Nowhere to keep isolate's state.
    #[error("cannot find a state directory: set ISOLATE_HOME or HOME")]
    NoStateDir,

    /// `ISOLATE_HOME` (or the XDG variable) names a relative path.
    #[error("the state directory must be an absolute path, got {}", .0.display())]
    RelativeStateDir(PathBuf),

    /// A value isolate writes as JSON could not be made so.
    #[error("cannot write JSON: {0}")]
    Json(#[from] serde_json::Error),

    /// The project's setup command (`.isolate.toml`) did not succeed; the new worktree was removed.
    #[error("the setup command {command:?} {failure}")]
    Setup {
        command: String,
        failure: SetupFailure,
    },

    /// A question isolate asked was not answered yes (or could not be asked).
    #[error("{0}")]
    NotConfirmed(&'static str),

    /// Writing a command's output failed (its reader went away, or the disk is full).
    #[error("cannot write to standard output: {0}")]
    Output(#[source] io::Error),

    /// git is missing, too old, or says what isolate cannot read.
    #[error(transparent)]
    GitProblem(#[from] GitProblem),

    /// The job's repository could not be read (`path`: its worktree).
    #[error("{source}")]
    Inspect {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// The job wrote ignore rules where nobody reviews them (`path`: its worktree; `reason`: where,
    /// and what to do about it): what they would hide cannot be told from what it left on purpose.
    #[error("{reason}")]
    InspectUntrusted { path: PathBuf, reason: String },

    /// A read of the job's repository (`path`) took longer than `limit`: the job can make it block.
    #[error("reading it took longer than {}s", .limit.as_secs())]
    InspectTimedOut {
        path: PathBuf,
        limit: std::time::Duration,
    },

    /// The job's branch tip is not a full object id of the project's format.
    #[error("the job's branch tip {tip:?} is not a full object id; nothing imported")]
    TipNotAnId { tip: String },

    /// The job's branch tip names an object that is not a commit.
    #[error("the job's branch tip {tip} is a {kind}, not a commit; nothing imported")]
    TipNotACommit { tip: String, kind: String },

    /// What the job's `tip` reaches is not all in the project's own store (`why`: git's first line).
    #[error(
        "the job's commits reach objects the project did not receive ({why}): its object files were \
         changed or are missing; nothing imported"
    )]
    ObjectsNotReceived { tip: String, why: String },

    /// `isolate import`: the job's branch cannot be brought in (`why`: the cleanup's words).
    #[error("nothing imported: {why}")]
    NothingImported { job: String, why: String },

    /// The job's record names no worktree.
    #[error("job {job} has no worktree")]
    NoWorktree { job: String },

    /// The record's id is not one isolate makes.
    #[error("the record's id {id:?} is not one isolate makes")]
    NotAJobId { id: String },

    /// The record names a worktree where isolate never puts the job's.
    #[error(
        "the record of {job} names {}, which is not where isolate puts its worktree; nothing done",
        .path.display()
    )]
    MisplacedWorktree { job: String, path: PathBuf },

    /// The project's base pin of a job does not hold the job's base.
    #[error("the project's {pin} is {found}, not the job's base {base}; nothing made")]
    PinMoved {
        pin: String,
        found: String,
        base: String,
    },

    /// `merge`: the project has no such branch to merge into.
    #[error("the project has no branch {target} to merge into")]
    NoTargetBranch { target: String },

    /// `merge`: the project has no branch for the job.
    #[error("the project has no branch {branch}: nothing of job {job} to merge")]
    NoJobBranch { job: String, branch: String },

    /// `merge`: the job started on a detached HEAD (`branch`: the job's).
    #[error(
        "job {job} started on a detached HEAD: there is no project branch to merge into \
         (git merge --no-ff {branch} yourself)"
    )]
    DetachedStart { job: String, branch: String },

    /// `merge`: the project branch moved since the preview.
    #[error("{target} moved since the preview; nothing merged into it (run isolate merge again)")]
    TargetMoved { target: String },

    /// `merge`: the commit made is not the merge of what was shown.
    #[error(
        "the merge commit {commit} is not the merge that was shown; nothing merged into {target}"
    )]
    MergeNotShown { commit: String, target: String },

    /// `merge`: a checkout holds the project branch in a way no merge may go under (`held`: how).
    #[error("{target} is {held}; nothing merged into it")]
    TargetHeld { target: String, held: String },

    /// `merge`: the project branch is not at the merge after the fast-forward.
    #[error("{target} is not at {commit} after the fast-forward; check the project")]
    NotFastForwarded { target: String, commit: String },

    /// `merge`: the fast-forward of the project's `checkout` was refused (`why`).
    #[error("{why}; nothing merged into {target} (checkout {})", .checkout.display())]
    CheckoutRefused {
        why: String,
        target: String,
        checkout: PathBuf,
    },

    /// `merge`: the job's worktree could not be read before a merge was made there.
    #[error("cannot read the job's worktree: {source}")]
    WorktreeUnreadable {
        path: PathBuf,
        #[source]
        source: Box<Error>,
    },

    /// `merge`: an operation is in progress in the job's worktree.
    #[error(
        "a {op} is in progress in {}: finish it there (isolate run --resume {job} -- \"$SHELL\"), then run isolate merge again",
        .path.display()
    )]
    OperationInProgress {
        op: &'static str,
        job: String,
        path: PathBuf,
    },

    /// `merge`: the job's worktree has work not committed where a conflict would be made.
    #[error(
        "{branch} conflicts with {target}, and the job's worktree {} has work not committed: commit it \
         there (isolate run --resume {job} -- \"$SHELL\"), then run isolate merge again",
        .path.display()
    )]
    UncommittedWork {
        job: String,
        branch: String,
        target: String,
        path: PathBuf,
    },

    /// `merge`: the merge in the job's worktree did not leave conflicts either (`said`: git's words).
    #[error(
        "{target} and {branch} do not merge cleanly in the project, and the worktree's merge said: {said}; nothing merged"
    )]
    NoCleanMerge {
        target: String,
        branch: String,
        said: String,
    },

    /// `merge`: the job's branch could not be checked out in its recreated worktree.
    #[error("cannot check out {branch} in the recreated worktree {}: {stderr}", .path.display())]
    RecreatedCheckout {
        branch: String,
        path: PathBuf,
        stderr: String,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
