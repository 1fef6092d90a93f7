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

/// Now, by the clock the kernel takes the change times of files from (the coarse one: a file
/// changed after this is read never has an earlier change time).
pub fn now() -> CheckedOut {
    match clock_gettime(ClockId::CLOCK_REALTIME_COARSE) {
        Ok(now) => match (u32::try_from(now.tv_sec()), u32::try_from(now.tv_nsec())) {
            (Ok(secs), Ok(nsecs)) => CheckedOut::At(stat::Time { secs, nsecs }),
            _ => CheckedOut::Unknown,
        },
        Err(_) => CheckedOut::Unknown,
    }
}

/// Notes in `job_dir` that the checkout of its worktree ended at `at`; a note that cannot be
/// written is no note (every file is read).
pub fn note(job_dir: &Path, at: CheckedOut) {
    if let CheckedOut::At(time) = at {
        let text = format!("{} {}\n", time.secs, time.nsecs);
        let _ = atomic::replace(&job_dir.join(CHECKED_OUT), text.as_bytes());
    }
}

/// When the checkout of the worktree of the job in `job_dir` ended, as noted.
pub fn noted(job_dir: &Path) -> CheckedOut {
    let Ok(text) = std::fs::read_to_string(job_dir.join(CHECKED_OUT)) else {
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
    }
}
