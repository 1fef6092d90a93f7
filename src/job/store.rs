//! Where isolate keeps its state, and how it writes files other processes read: every record is
//! written to a temporary file in the same directory, synced, then renamed over the old one, so a
//! reader sees the old record or the new one, never half of one.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::job::id::JobId;
use crate::job::record::Record;
use crate::sys::dirs;

/// `$ISOLATE_HOME`, else, inside a job, the outer job's (job/nest.rs), else
/// `$XDG_STATE_HOME/isolate`, else `~/.local/state/isolate`.
pub fn state_dir() -> Result<PathBuf> {
    let dir = if let Some(home) = dirs::from_env("ISOLATE_HOME") {
        home
    } else if let Some(nested) = crate::job::nest::outer().and_then(|o| o.state.clone()) {
        nested
    } else if let Some(state) = dirs::state_home() {
        state.join("isolate")
    } else {
        return Err(Error::NoStateDir);
    };
    if !dir.is_absolute() {
        return Err(Error::RelativeStateDir(dir));
    }
    Ok(dir)
}

/// The jobs directory of a state directory.
pub fn jobs_dir(state: &Path) -> PathBuf {
    state.join("jobs")
}

/// Takes `id` for a new job by creating `jobs/<id>` exclusively. `Ok(None)` when the id is taken,
/// so that parallel launches never share one.
pub fn claim(state: &Path, id: &JobId) -> Result<Option<PathBuf>> {
    let jobs = jobs_dir(state);
    fs::create_dir_all(&jobs)
        .map_err(|e| Error::io("cannot create the jobs directory", &jobs, e))?;
    let dir = jobs.join(id.as_str());
    if forgotten_dir(state).join(id.as_str()).exists() {
        return Ok(None);
    }
    // The user's alone (0700): the job's output log holds what its terminal echoed of what the
    // user typed into an attach, and nothing of a job is for other users to read.
    match std::os::unix::fs::DirBuilderExt::mode(&mut fs::DirBuilder::new(), 0o700).create(&dir) {
        Ok(()) => Ok(Some(dir)),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(None),
        Err(e) => Err(Error::io("cannot create the job directory", &dir, e)),
    }
}

pub fn record_path(job_dir: &Path) -> PathBuf {
    job_dir.join("job.json")
}

/// Writes a job's record, atomically and durably: after a crash of the machine it reads as this
/// one. A job without a worktree has nothing such a crash could lose (its processes end with the
/// machine, and nothing of it is to bring home): its record is written atomically, not waited for
/// (fsync costs a launch more than the rest of it on a busy disk).
pub fn write_record(job_dir: &Path, record: &Record) -> Result<()> {
    match record.worktree {
        Some(_) => write_atomic(&record_path(job_dir), &record_json(record)?),
        None => crate::sys::atomic::replace(&record_path(job_dir), &record_json(record)?),
    }
}

/// Writes a record that the job passes through (`starting`, its pid once CMD runs), which a later
/// write replaces: whole and atomic, but without waiting for the rename to reach the disk. After a
/// crash of the machine the record reads as this one or the one before it; either reads as `lost`,
/// since the crash ended the supervisor too.
pub fn write_passing_record(job_dir: &Path, record: &Record) -> Result<()> {
    match record.worktree {
        Some(_) => crate::sys::atomic::write_passing(&record_path(job_dir), &record_json(record)?),
        None => crate::sys::atomic::replace(&record_path(job_dir), &record_json(record)?),
    }
}

fn record_json(record: &Record) -> Result<Vec<u8>> {
    let mut json = serde_json::to_vec_pretty(record)?;
    json.push(b'\n');
    Ok(json)
}

pub use crate::sys::atomic::write as write_atomic;

/// Removes a job's directory (record and private temporary directory, however deep the job made
/// it: sys/remove/); what could not be removed is said.
pub fn forget(job_dir: &Path) -> Result<()> {
    crate::sys::remove::remove_tree(job_dir)
        .map_err(|e| Error::io("cannot remove the job's directory", job_dir, e))
}

/// Reads one job's record.
pub fn read_record(job_dir: &Path) -> Result<Record> {
    let path = record_path(job_dir);
    // A regular file, not a link, and bounded: anything else there (a FIFO, a link to another
    // file, a sparse gigabyte) is no record isolate wrote, and must neither hang nor fill it.
    let text = crate::textfile::read_untrusted(&path, RECORD_MAX)
        .map_err(|e| Error::io("cannot read the job record", &path, e))?;
    let record: Record = serde_json::from_str(&text).map_err(|e| Error::NotARecord {
        path: path.clone(),
        why: e.to_string(),
    })?;
    // A record lies in the directory named after its job: a copy elsewhere (a running job's,
    // its state edited) would have isolate act on that job under another name.
    match job_dir.file_name().and_then(|n| n.to_str()) == Some(record.id.as_str()) {
        true => Ok(record),
        false => Err(Error::NotARecord {
            path,
            why: format!(
                "it names job {} but lies in another job's directory",
                record.id
            ),
        }),
    }
}

/// Larger than any record isolate writes.
const RECORD_MAX: u64 = 4 << 20;

/// How often a reader looks at a record it waits on: the supervisor writes it once when the job ends.
const AWAIT_POLL: Duration = Duration::from_millis(20);

/// The job's record once it no longer says `queued` or `running` (or its supervisor is gone:
/// `lost`), read every 20 ms; after `limit` (`None`: no limit) the record as it is then.
pub fn await_end(job_dir: &Path, limit: Option<Duration>) -> Result<Record> {
    await_record(job_dir, limit, |r| !r.effective_state().live())
}

/// The job's record, read every 20 ms, once `done` says so of it; after `limit` (`None`: no
/// limit) the record as it is then.
pub fn await_record(
    job_dir: &Path,
    limit: Option<Duration>,
    done: impl Fn(&Record) -> bool,
) -> Result<Record> {
    let deadline = limit.map(|limit| Instant::now() + limit);
    loop {
        let record = as_it_stands(job_dir, read_record(job_dir)?)?;
        let past = deadline.is_some_and(|d| Instant::now() > d);
        if done(&record) || past {
            return Ok(record);
        }
        std::thread::sleep(AWAIT_POLL);
    }
}

/// `record`, read from `job_dir`, as it stands: a supervisor writes the job's end and then exits,
/// so a record read as `running` (or `queued`) whose supervisor is gone by the look at it may have
/// been read just before its end was written (`wait` then took an ended job for a lost one): it is
/// read once more.
fn as_it_stands(job_dir: &Path, record: Record) -> Result<Record> {
    if record.state().live() && !record.supervisor_alive() {
        return read_record(job_dir);
    }
    Ok(record)
}

/// Every job on record, in start order (not the tombstones `rm --force` leaves: they are not jobs
/// any more).
pub fn list(state: &Path) -> Vec<(PathBuf, Record)> {
    let mut jobs = records_in(&jobs_dir(state));
    jobs.retain(|(_, record)| !record.forgotten);
    sort(&mut jobs);
    jobs
}

/// Every job on record and every tombstone, in start order: `worktrees` and `prune`, which must
/// see each worktree isolate made until it is settled.
pub fn list_all(state: &Path) -> Vec<(PathBuf, Record)> {
    let mut jobs = records_in(&jobs_dir(state));
    jobs.extend(records_in(&forgotten_dir(state)));
    sort(&mut jobs);
    jobs
}

/// Where the tombstones of forgotten jobs are kept.
pub fn forgotten_dir(state: &Path) -> PathBuf {
    state.join("forgotten")
}

/// Whether `id` has a directory in the state directory, as a job or as a tombstone.
pub fn known(state: &Path, id: &str) -> bool {
    jobs_dir(state).join(id).exists() || forgotten_dir(state).join(id).exists()
}

/// The job's record becomes a tombstone: marked forgotten, then moved out of the jobs directory,
/// so that no command but `worktrees` and `prune` sees it. Returns where it now is.
pub fn bury(state: &Path, job_dir: &Path, record: &Record) -> Result<PathBuf> {
    let mut buried = record.clone();
    buried.forgotten = true;
    write_record(job_dir, &buried)?;
    let graves = forgotten_dir(state);
    fs::create_dir_all(&graves).map_err(|e| Error::io("cannot create", &graves, e))?;
    let grave = graves.join(&record.id);
    fs::rename(job_dir, &grave).map_err(|e| Error::io("cannot move the record to", &grave, e))?;
    Ok(grave)
}

/// The directories in `dir` named as job ids, with a readable record. Directories whose name is
/// not a job id and unreadable records are skipped (a job being created has no record yet).
fn records_in(dir: &Path) -> Vec<(PathBuf, Record)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_str().and_then(JobId::parse).is_some())
        .filter_map(|e| {
            let dir = e.path();
            let record = read_record(&dir).ok()?;
            Some((dir, record))
        })
        .collect()
}

/// Oldest first: by start time, then (within its second) by the supervisor's start in clock ticks.
fn sort(jobs: &mut [(PathBuf, Record)]) {
    jobs.sort_by(|a, b| {
        a.1.started_at
            .cmp(&b.1.started_at)
            .then(a.1.supervisor_start.cmp(&b.1.supervisor_start))
            .then(a.1.id.cmp(&b.1.id))
    });
}

/// The job `query` names: an id, a unique prefix of one, or a job's name.
pub fn resolve(state: &Path, query: &str) -> Result<(PathBuf, Record)> {
    if let Some(id) = JobId::parse(query) {
        let dir = jobs_dir(state).join(id.as_str());
        if dir.join("job.json").exists() {
            let record = as_it_stands(&dir, read_record(&dir)?)?;
            if !record.forgotten {
                return Ok((dir, record));
            }
        }
    }
    let jobs = list(state);
    let by_prefix: Vec<_> = jobs
        .iter()
        .filter(|(_, r)| r.id.starts_with(query))
        .collect();
    let matches = if by_prefix.is_empty() {
        jobs.iter()
            .filter(|(_, r)| r.name.as_deref() == Some(query))
            .collect()
    } else {
        by_prefix
    };
    match matches.as_slice() {
        [(dir, record)] => Ok((dir.clone(), as_it_stands(dir, record.clone())?)),
        [] => Err(Error::NoSuchJob(query.to_string())),
        many => Err(Error::AmbiguousJob {
            query: query.to_string(),
            jobs: many.iter().map(|(_, r)| r.id.clone()).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::record::State;

    /// A record read as `running` just before its supervisor wrote the end and exited: by the look
    /// at the supervisor it is gone, and the record on disk says how the job ended. That is what
    /// counts, not `lost`.
    #[test]
    fn a_record_read_just_before_its_end_is_taken_as_it_ended() {
        let root = tempfile::tempdir().unwrap();
        let ended: Record =
            serde_json::from_str(include_str!("../../tests/data/record-schema-1-exited.json"))
                .unwrap();
        // A record lies in the directory named after its job.
        let dir = root.path().join(ended.id.as_str());
        fs::create_dir(&dir).unwrap();
        let mut stale = ended.clone();
        stale.set_state(State::Running);
        // No process has pid 0's start time: the supervisor is gone.
        stale.supervisor_pid = 0;
        write_record(&dir, &ended).unwrap();
        assert_eq!(stale.effective_state(), State::Lost);
        let record = as_it_stands(&dir, stale).unwrap();
        assert_eq!(record.effective_state(), State::Exited { code: 0 });
        // A record still `running` on disk with its supervisor gone is lost.
        let mut lost = ended;
        lost.set_state(State::Running);
        lost.supervisor_pid = 0;
        write_record(&dir, &lost).unwrap();
        let record = as_it_stands(&dir, lost).unwrap();
        assert_eq!(record.effective_state(), State::Lost);
    }
}
