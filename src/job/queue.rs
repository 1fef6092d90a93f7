//! The queue of background jobs (docs/supervise.md, "The queue"): with `max_running` configured, a
//! background job starts only while fewer than that many background jobs run and no job queued
//! before it still waits; the others wait, `queued`, each in a waiter process of its own.
//! `<state>/queue/` holds an entry for each background job the queue counts, named `<seq>-<id>` in
//! the order they came; the job's record says where it is (queued, running, ended), and an entry
//! whose job has ended or was lost is removed by the next look. Every look and every change is made
//! under `<state>/queue.lock`, so that jobs submitted at once never all see the same free slot.
//!
//! The waiters look every 100 ms: they read the records of the entries only, never every record on
//! file. This module answers whose turn it is; it starts and stops nothing.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::job::id::JobId;
use crate::job::record::State;
use crate::job::store;
use crate::sys::lock::Lock;

/// The queue of one state directory, locked: held while a look or a change is made, never longer.
pub(crate) struct Queue {
    state: PathBuf,
    dir: PathBuf,
    _lock: Lock,
}

/// A job's place in the queue: after every entry with a lower number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    seq: u64,
    id: String,
}

/// One entry of the queue's directory.
struct Entry {
    place: Place,
    path: PathBuf,
}

/// What a look at an entry's record found.
enum Seen {
    /// A background job that runs: it holds a slot.
    Running,
    /// A job that waits.
    Queued,
    /// Ended, lost, or no record any more: the entry goes.
    Gone,
}

impl Queue {
    /// The queue of the state directory `state`, locked until dropped (waiting while another
    /// process looks).
    pub(crate) fn lock(state: &Path) -> Result<Queue> {
        let dir = state.join("queue");
        fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create the queue", &dir, e))?;
        let lock = Lock::exclusive(&state.join("queue.lock"))?;
        Ok(Queue {
            state: state.to_path_buf(),
            dir,
            _lock: lock,
        })
    }

    /// Every live background job on record that the queue does not count yet (one started while
    /// no `max_running` was set) gets an entry: the count is of every background job that runs.
    /// Reads every record: done once per submission, never by the waiters' looks.
    pub(crate) fn count_every_job(&self) -> Result<()> {
        let known: HashSet<String> = self.entries().into_iter().map(|e| e.place.id).collect();
        for (_, record) in store::list(&self.state) {
            if record.background && record.effective_state().live() && !known.contains(&record.id) {
                self.enter(&record.id)?;
            }
        }
        Ok(())
    }

    /// Enters job `id` after every entry there is (an older entry of the same id, a job resumed
    /// since, goes): its place.
    pub(crate) fn enter(&self, id: &str) -> Result<Place> {
        let entries = self.entries();
        for old in entries.iter().filter(|e| e.place.id == id) {
            let _ = fs::remove_file(&old.path);
        }
        let seq = entries.iter().map(|e| e.place.seq).max().unwrap_or(0) + 1;
        let place = Place {
            seq,
            id: id.to_string(),
        };
        let path = self.dir.join(place.name());
        fs::File::create_new(&path).map_err(|e| Error::io("cannot enter the queue", &path, e))?;
        Ok(place)
    }

    /// Whether the job at `place` (a job not yet in the queue: `None`) may start now: fewer than
    /// `max` background jobs run, and no job queued before it waits. Entries of jobs that ended
    /// or were lost are removed on the way.
    pub(crate) fn may_start(&self, place: Option<&Place>, max: usize) -> bool {
        let mut running = 0;
        for entry in self.entries() {
            if place.is_some_and(|p| p.id == entry.place.id) {
                continue;
            }
            match self.look(&entry.place.id) {
                Seen::Running => running += 1,
                Seen::Queued if place.map_or(true, |p| entry.place.seq < p.seq) => return false,
                Seen::Queued => {}
                Seen::Gone => {
                    let _ = fs::remove_file(&entry.path);
                }
            }
        }
        running < max
    }

    /// The job `id`'s record, as it stands.
    fn look(&self, id: &str) -> Seen {
        let Ok(record) = store::read_record(&store::jobs_dir(&self.state).join(id)) else {
            return Seen::Gone;
        };
        match record.effective_state() {
            State::Running if record.background => Seen::Running,
            State::Queued => Seen::Queued,
            _ => Seen::Gone,
        }
    }

    /// The entries, oldest first. A name that is no entry is left alone.
    fn entries(&self) -> Vec<Entry> {
        let mut entries: Vec<Entry> = fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let place = Place::parse(e.file_name().to_str()?)?;
                Some(Entry {
                    place,
                    path: e.path(),
                })
            })
            .collect();
        entries.sort_by_key(|e| e.place.seq);
        entries
    }
}

impl Place {
    /// The entry's name: the number, zero-padded so that names sort as numbers, then the id.
    fn name(&self) -> String {
        format!("{:020}-{}", self.seq, self.id)
    }

    fn parse(name: &str) -> Option<Place> {
        let (seq, id) = name.split_once('-')?;
        let id = JobId::parse(id)?;
        Some(Place {
            seq: seq.parse().ok()?,
            id: id.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::record::Record;

    fn job(state: &Path, id: &str, set: State, background: bool) {
        let mut record: Record =
            serde_json::from_str(include_str!("../../tests/data/record-schema-1-exited.json"))
                .unwrap();
        record.id = id.to_string();
        record.set_state(set);
        record.background = background;
        // This test's own process: a live supervisor.
        let me = std::process::id() as i32;
        record.supervisor_pid = me;
        record.supervisor_start = crate::sys::process::start_time(me).unwrap();
        let dir = store::jobs_dir(state).join(id);
        fs::create_dir_all(&dir).unwrap();
        store::write_record(&dir, &record).unwrap();
    }

    /// Two slots: two running jobs fill them; the older of two queued jobs goes first once one
    /// ends, and a job that ended leaves the queue at the next look.
    #[test]
    fn the_oldest_queued_job_takes_the_first_free_slot() {
        let root = tempfile::tempdir().unwrap();
        let state = root.path();
        let queue = Queue::lock(state).unwrap();
        for id in ["a-0001", "b-0002"] {
            job(state, id, State::Running, true);
            queue.enter(id).unwrap();
        }
        job(state, "c-0003", State::Queued, true);
        let c = queue.enter("c-0003").unwrap();
        job(state, "d-0004", State::Queued, true);
        let d = queue.enter("d-0004").unwrap();
        assert!(!queue.may_start(Some(&c), 2), "both slots are taken");
        job(state, "a-0001", State::Exited { code: 0 }, true);
        assert!(!queue.may_start(Some(&d), 2), "c is older");
        assert!(!queue.may_start(None, 2), "a newcomer waits behind c");
        assert!(queue.may_start(Some(&c), 2));
        assert_eq!(queue.entries().len(), 3, "the ended job left the queue");
        job(state, "c-0003", State::Running, true);
        assert!(!queue.may_start(Some(&d), 2));
        // A foreground job (a resumed one) holds no slot; nor does a job whose record is gone.
        job(state, "b-0002", State::Running, false);
        assert!(queue.may_start(Some(&d), 2));
    }

    /// A job that runs in the background without an entry (started without a queue) is counted once
    /// a submission looks at every record.
    #[test]
    fn jobs_started_without_a_queue_are_counted() {
        let root = tempfile::tempdir().unwrap();
        let state = root.path();
        job(state, "a-0001", State::Running, true);
        job(state, "b-0002", State::Running, false);
        job(state, "c-0003", State::Exited { code: 0 }, true);
        let queue = Queue::lock(state).unwrap();
        assert!(queue.may_start(None, 1));
        queue.count_every_job().unwrap();
        assert!(!queue.may_start(None, 1));
        assert!(queue.may_start(None, 2));
        let ids: Vec<String> = queue.entries().into_iter().map(|e| e.place.id).collect();
        assert_eq!(ids, ["a-0001"]);
    }
}
