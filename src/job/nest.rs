//! A job started inside another job (docs/cli.md, "Nested jobs"): isolate run by a process of an
//! outer job, which the outer job's sandbox already holds. Everything the inner isolate does is
//! bounded by the outer sandbox, so what this module reads (the outer job's variables, which the
//! outer job can change) only decides how the inner job narrows it further, never what the outer
//! job may do.
//!
//! Two things differ one level down. The kernel allows one seccomp listener in a process's filter
//! chain (`EBUSY`), and the outer job's supervisor holds it: an inner job's filter hands nothing
//! over, and the outer job's broker keeps judging every connect under the outer policy
//! (sandbox/seccomp/). And the user's state directory is out of the outer job's reach: the inner
//! jobs' state is a directory isolate makes in the outer job's record directory and lets the outer
//! job write (`<state>/jobs/<outer id>/nested`, `ISOLATE_NESTED_STATE`), where the outer job's end
//! finds it, and where no inner job reads another's (it is in none of their projects).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::job::id::JobId;

/// The variable naming, inside a job, the state directory of the jobs started in it.
pub const STATE_VAR: &str = "ISOLATE_NESTED_STATE";

/// Where the jobs started inside the job of `job_dir` keep their state.
pub fn state_of(job_dir: &Path) -> PathBuf {
    job_dir.join("nested")
}

/// Makes the nested state directory of the job of `job_dir` (the user's alone, 0700), or finds it
/// made (`--resume`: it holds the state of the jobs started in the job's earlier runs). Anything
/// but a directory there is refused: the job could never have made it (it cannot write its record
/// directory), so someone else did.
pub fn make_state(job_dir: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = state_of(job_dir);
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => Ok(dir),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            match std::fs::symlink_metadata(&dir) {
                Ok(meta) if meta.is_dir() => Ok(dir),
                _ => Err(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "exists and is not a directory",
                )),
            }
        }
        Err(e) => Err(e),
    }
}

/// The file of the nested state where the outer job's supervisor lists the paths its rules grant
/// (NUL-separated): the names an inner job's carving takes for a directory the outer domain does
/// not let it list (sandbox/plan/carve.rs). The outer job can rewrite it; it can only ever make
/// an inner job name entries its own policy reads, under a domain that grants them or not.
const GRANTS: &str = "outer-grants";

/// Lists `paths` in the nested state `state` for the jobs started there.
pub fn write_grants<'a>(
    state: &Path,
    paths: impl Iterator<Item = &'a Path>,
) -> crate::error::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let mut bytes = Vec::new();
    for path in paths {
        bytes.extend_from_slice(path.as_os_str().as_bytes());
        bytes.push(0);
    }
    crate::sys::atomic::replace(&state.join(GRANTS), &bytes)
}

/// What the outer job's supervisor listed (`write_grants`), inside a job; nothing elsewhere, or
/// when it cannot be read (then a directory the inner job cannot list grants nothing, as before).
pub fn outer_grants() -> Vec<PathBuf> {
    let Some(state) = std::env::var_os(STATE_VAR) else {
        return Vec::new();
    };
    let text = crate::textfile::read_untrusted(&Path::new(&state).join(GRANTS), 4 << 20);
    text.map(|t| {
        t.split('\0')
            .filter(|p| p.starts_with('/'))
            .map(PathBuf::from)
            .collect()
    })
    .unwrap_or_default()
}

/// The outer job this process runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outer {
    pub id: JobId,
    /// The outer job's worktree, for a `--worktree` job.
    pub worktree: Option<PathBuf>,
    /// Where the jobs started inside the outer job keep their state.
    pub state: Option<PathBuf>,
}

/// The outer job, when this process runs inside one: the variables isolate gives every job, and
/// a seccomp filter over this process whose listener some supervisor holds (a job's processes
/// cannot leave theirs). Both, so that a stray `ISOLATE_JOB` elsewhere (a container's filter has
/// no listener) never makes isolate leave its connects to a judge that is not there.
pub fn outer() -> Option<&'static Outer> {
    static OUTER: OnceLock<Option<Outer>> = OnceLock::new();
    OUTER.get_or_init(detect).as_ref()
}

fn detect() -> Option<Outer> {
    let id = JobId::parse(&std::env::var("ISOLATE_JOB").ok()?)?;
    if !filtered() || !crate::sys::listener::held() {
        return None;
    }
    let absolute =
        |var: &str| crate::sys::dirs::from_env(var).filter(|p| p.is_absolute() && p.is_dir());
    Some(Outer {
        id,
        worktree: absolute("ISOLATE_WORKTREE"),
        state: absolute(STATE_VAR),
    })
}

/// This process runs under a seccomp filter (`Seccomp: 2` in its status).
fn filtered() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .any(|l| l.strip_prefix("Seccomp:").is_some_and(|v| v.trim() == "2"))
    })
}
