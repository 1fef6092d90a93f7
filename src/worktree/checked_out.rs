//! When isolate's checkout of a job's worktree ended, noted in the job's record directory (which
//! the job cannot write): the inspection trusts the stat data of a file only when the file has not
//! changed since (inspect/forged.rs). A note that is missing, unreadable or later than now is no
//! note: every file is then read.

use std::path::Path;

use gix::index::entry::stat;
use nix::time::{clock_gettime, ClockId};

use crate::sys::atomic;
use crate::worktree::inspect::CheckedOut;

/// In the job directory: the end of the worktree's checkout, `<seconds> <nanoseconds>`.
const CHECKED_OUT: &str = "checked-out";

/// Now, to the nanosecond: no file written before has a later change time (the kernel dates
/// them by its coarse clock, or finer where a file system asks, never ahead of this one).
pub fn now() -> CheckedOut {
    read(ClockId::CLOCK_REALTIME)
}

/// The time by `clock`, as the index records times.
fn read(clock: ClockId) -> CheckedOut {
    match clock_gettime(clock) {
        Ok(now) => match (u32::try_from(now.tv_sec()), u32::try_from(now.tv_nsec())) {
            (Ok(secs), Ok(nsecs)) => CheckedOut::At(stat::Time { secs, nsecs }),
            _ => CheckedOut::Unknown,
        },
        Err(_) => CheckedOut::Unknown,
    }
}

/// Notes in `job_dir` that the checkout of its worktree ended at `at`; a note that cannot be
/// written is no note (every file is read). The job may start only once [`settle`] returned.
pub fn note(job_dir: &Path, at: CheckedOut) {
    if let CheckedOut::At(time) = at {
        let text = format!("{} {}\n", time.secs, time.nsecs);
        let _ = atomic::replace(&job_dir.join(CHECKED_OUT), text.as_bytes());
    }
}

/// Returns once the kernel's coarse clock, which dates the change times of files, has passed the
/// note `at` of the job in `job_dir` (at most one tick; usually already): no file the job changes
/// can then have an earlier change time. A coarse clock that does not get there takes the note
/// away (every file is read).
pub fn settle(job_dir: &Path, at: CheckedOut) {
    let CheckedOut::At(time) = at else {
        return;
    };
    for _ in 0..MAX_WAITS {
        match read(ClockId::CLOCK_REALTIME_COARSE) {
            CheckedOut::At(coarse) if coarse < time => std::thread::sleep(WAIT),
            CheckedOut::At(_) => return,
            CheckedOut::Unknown => break,
        }
    }
    let _ = std::fs::remove_file(job_dir.join(CHECKED_OUT));
}

/// How long the wait for the coarse clock sleeps at a time, and how often at most (a tick is
/// 1-10 ms).
const WAIT: std::time::Duration = std::time::Duration::from_micros(500);
const MAX_WAITS: usize = 100;

/// When the checkout of the worktree of the job in `job_dir` ended, as noted.
pub fn noted(job_dir: &Path) -> CheckedOut {
    // Read as a job's file is (no link, no FIFO, a few bytes): a nested job's record directory is
    // the outer job's to write.
    let Ok(text) = crate::textfile::read_untrusted(&job_dir.join(CHECKED_OUT), 64) else {
        return CheckedOut::Unknown;
    };
    let mut parts = text.trim_end_matches('\n').split(' ');
    let (Some(secs), Some(nsecs), None) = (parts.next(), parts.next(), parts.next()) else {
        return CheckedOut::Unknown;
    };
    let (Ok(secs), Ok(nsecs)) = (secs.parse(), nsecs.parse()) else {
        return CheckedOut::Unknown;
    };
    let at = stat::Time { secs, nsecs };
    match now() {
        CheckedOut::At(now) if at <= now && nsecs < 1_000_000_000 => CheckedOut::At(at),
        _ => CheckedOut::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_reads_back_and_a_bad_one_is_no_note() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(noted(dir.path()), CheckedOut::Unknown, "no note");
        let at = now();
        note(dir.path(), at);
        assert_eq!(noted(dir.path()), at);
        let path = dir.path().join(CHECKED_OUT);
        for bad in [
            "",
            "12",
            "12 3 4",
            "x 1",
            "1 1000000000",
            "4294967295 0",
            "-1 0",
        ] {
            std::fs::write(&path, bad).unwrap();
            assert_eq!(noted(dir.path()), CheckedOut::Unknown, "{bad:?}");
        }
        // A FIFO where the note goes is no note, and never waited on.
        std::fs::remove_file(&path).unwrap();
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(noted(dir.path()), CheckedOut::Unknown, "a FIFO");
    }

    #[test]
    fn the_job_starts_once_the_coarse_clock_has_passed_the_note() {
        let dir = tempfile::tempdir().unwrap();
        let at = now();
        note(dir.path(), at);
        settle(dir.path(), at);
        let CheckedOut::At(at) = at else {
            panic!("no clock")
        };
        let CheckedOut::At(coarse) = read(ClockId::CLOCK_REALTIME_COARSE) else {
            panic!("no coarse clock")
        };
        assert!(coarse >= at, "{coarse:?} before {at:?}");
        assert_eq!(noted(dir.path()), CheckedOut::At(at), "the note stays");
        // A note the coarse clock does not reach in the wait is taken away: every file is read.
        let ahead = CheckedOut::At(stat::Time {
            secs: at.secs + 3600,
            nsecs: 0,
        });
        note(dir.path(), ahead);
        settle(dir.path(), ahead);
        assert!(!dir.path().join(CHECKED_OUT).exists());
    }
}
