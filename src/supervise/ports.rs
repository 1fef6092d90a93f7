//! `ISOLATE_PORT`: a block of 10 TCP ports per job, so parallel dev servers do not collide. Blocks are
//! drawn from `ISOLATE_PORT_RANGE` (default 20000-29999), each taken with an exclusive lock file
//! `ports/<first>` naming the job; a lock whose job is no longer running is stale and taken over.
//! Every port of a block is checked free (bound and released) when the block is drawn.

use std::fs;
use std::io::ErrorKind;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::job::record::State;
use crate::job::store;

pub const RANGE_VAR: &str = "ISOLATE_PORT_RANGE";
pub const BLOCK: u16 = 10;
const DEFAULT_RANGE: (u16, u16) = (20000, 29999);

/// A reserved block; released with `release` when the job ends.
#[derive(Debug)]
pub struct PortBlock {
    pub first: u16,
    lock: PathBuf,
}

impl PortBlock {
    pub fn release(self) {
        let _ = fs::remove_file(&self.lock);
    }
}

fn range() -> Result<(u16, u16)> {
    let Ok(text) = std::env::var(RANGE_VAR) else {
        return Ok(DEFAULT_RANGE);
    };
    let parsed = text
        .split_once('-')
        .and_then(|(a, b)| Some((a.trim().parse::<u16>().ok()?, b.trim().parse::<u16>().ok()?)))
        .filter(|(a, b)| *a >= 1024 && b.checked_sub(*a).is_some_and(|span| span + 1 >= BLOCK));
    parsed.ok_or_else(|| {
        Error::Usage(format!(
            "{RANGE_VAR}={text:?}: expected FIRST-LAST, unprivileged ports, at least {BLOCK} of them"
        ))
    })
}

/// Reserves a free block for job `id`.
pub fn reserve(state: &Path, id: &str) -> Result<PortBlock> {
    let (low, high) = range()?;
    let blocks = (u32::from(high) - u32::from(low) + 1) / u32::from(BLOCK);
    let dir = state.join("ports");
    fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    // Start at a place derived from the id, so parallel launches rarely contend for the same lock.
    let start = id
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
        % blocks;
    for i in 0..blocks {
        let first = low + (((start + i) % blocks) * u32::from(BLOCK)) as u16;
        let lock = dir.join(first.to_string());
        if !take(&lock, id, state)? {
            continue;
        }
        if (first..first + BLOCK).all(port_free) {
            return Ok(PortBlock { first, lock });
        }
        let _ = fs::remove_file(&lock);
    }
    Err(Error::NoFreePorts {
        block: BLOCK,
        low,
        high,
        var: RANGE_VAR,
    })
}

/// Creates the lock exclusively; takes over a stale one once.
fn take(lock: &Path, id: &str, state: &Path) -> Result<bool> {
    for _ in 0..2 {
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(lock)
        {
            Ok(_) => {
                fs::write(lock, id).map_err(|e| Error::io("cannot write", lock, e))?;
                return Ok(true);
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                let owner = fs::read_to_string(lock).unwrap_or_default();
                if owner.is_empty() || owner_running(state, &owner) {
                    return Ok(false);
                }
                // The owner ended or was lost: the block is free again.
                let _ = fs::remove_file(lock);
            }
            Err(e) => return Err(Error::io("cannot create", lock, e)),
        }
    }
    Ok(false)
}

fn owner_running(state: &Path, id: &str) -> bool {
    let dir = store::jobs_dir(state).join(id);
    match store::read_record(&dir) {
        Ok(record) => record.effective_state() == State::Running,
        // No record yet: a job being created right now.
        Err(_) => dir.exists(),
    }
}

fn port_free(port: u16) -> bool {
    TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)).is_ok()
}
