//! `ISOLATE_PORT`: a block of 10 TCP ports per job, so parallel dev servers do not collide. Blocks are
//! drawn from `ISOLATE_PORT_RANGE` (default 20000-29999), each taken with a lock file
//! `ports/<first>` naming the job; a lock whose job is no longer running is stale and taken over.
//! Every port of a block is checked free (bound and released) when the block is drawn.
//!
//! Taking a block (creating its lock, or taking over a stale one) happens only while holding the
//! `flock` of `ports/.take`, and the lock's content is written atomically: two jobs never hold one
//! block, and no lock is ever left empty. Not durably (no fsync): a crash of the machine ends the
//! lock's owner too, and a lock it left empty or old names no job that runs. A lock that is not a
//! regular file (a directory, a FIFO, a link) is a block not taken, never read. Ports are computed
//! in wide arithmetic: a range that ends at 65535 checks its last port too.

use std::fs;
use std::net::{Ipv4Addr, Ipv6Addr, TcpListener};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::job::record::State;
use crate::job::store;
use crate::sys::lock::Lock;

#[cfg(test)]
mod tests;

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
    /// The block's ports, `first` and the nine after it.
    pub fn ports(&self) -> Vec<u16> {
        ports_from(self.first)
    }

    pub fn release(self) {
        let _ = fs::remove_file(&self.lock);
    }
}

/// The ports of the block that starts at `first` (within 1..=65535: the range check makes sure).
pub fn ports_from(first: u16) -> Vec<u16> {
    (u32::from(first)..u32::from(first) + u32::from(BLOCK))
        .filter_map(|p| u16::try_from(p).ok())
        .collect()
}

fn range() -> Result<(u16, u16)> {
    let Ok(text) = std::env::var(RANGE_VAR) else {
        return Ok(DEFAULT_RANGE);
    };
    let parsed = text
        .split_once('-')
        .and_then(|(a, b)| Some((a.trim().parse::<u16>().ok()?, b.trim().parse::<u16>().ok()?)))
        .filter(|&(a, b)| a >= 1024 && u32::from(b) + 1 >= u32::from(a) + u32::from(BLOCK));
    parsed.ok_or_else(|| {
        Error::Usage(format!(
            "{RANGE_VAR}={text:?}: expected FIRST-LAST, unprivileged ports, at least {BLOCK} of them"
        ))
    })
}

/// Reserves a free block for job `id`.
pub fn reserve(state: &Path, id: &str) -> Result<PortBlock> {
    reserve_in(state, id, range()?)
}

/// Reserves a free block for job `id` in the ports `low..=high`.
fn reserve_in(state: &Path, id: &str, (low, high): (u16, u16)) -> Result<PortBlock> {
    let blocks = (u32::from(high) + 1 - u32::from(low)) / u32::from(BLOCK);
    let dir = state.join("ports");
    fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    // Start at a place derived from the id, so parallel launches rarely contend for the same lock.
    let start = id
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
        % blocks;
    for i in 0..blocks {
        let first = u32::from(low) + ((start + i) % blocks) * u32::from(BLOCK);
        let Ok(first) = u16::try_from(first) else {
            continue;
        };
        if Some(first) == outer_block() {
            continue;
        }
        let lock = dir.join(first.to_string());
        if !take(&dir, &lock, id, state)? {
            continue;
        }
        if ports_from(first).into_iter().all(port_free) {
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

/// Takes the block's lock for `id`: free, or held by a job that no longer runs. Decided and
/// written while holding `ports/.take`, so that two takers never both see a stale lock free.
/// A lock that is not a regular file (a directory, a FIFO, a link: none of isolate's) is a block
/// not taken, never followed nor read.
fn take(dir: &Path, lock: &Path, id: &str, state: &Path) -> Result<bool> {
    let _taking = Lock::exclusive(&dir.join(".take"))?;
    match fs::symlink_metadata(lock) {
        Ok(meta) if !meta.is_file() => return Ok(false),
        Ok(_) => match read_owner(lock) {
            Ok(owner) if owner_running(state, owner.trim()) => return Ok(false),
            // The owner ended or was lost (or the lock is unreadable, never half-written): free.
            Ok(_) => {}
            Err(e) => return Err(Error::io("cannot read", lock, e)),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("cannot read", lock, e)),
    }
    crate::sys::atomic::replace(lock, id.as_bytes())?;
    Ok(true)
}

/// The id a lock names: at most 256 bytes of it, never through a link.
fn read_owner(lock: &Path) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut bytes = Vec::new();
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(lock)?
        .take(256)
        .read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn owner_running(state: &Path, id: &str) -> bool {
    // A job id is one name of the jobs directory.
    if id.is_empty() || id.contains('/') || id == "." || id == ".." {
        return false;
    }
    let dir = store::jobs_dir(state).join(id);
    match store::read_record(&dir) {
        Ok(record) => record.effective_state() == State::Running,
        // No record yet: a job being created right now.
        Err(_) => dir.exists(),
    }
}

/// Whether nobody listens on `port`: bound and released on every IPv4 address, then on every
/// IPv6 one (dual-stack where the system binds so, which a listener of either family on the port
/// also refuses), so that a v6-only `[::1]:P` server of the user's counts as holding it too. A
/// system without IPv6 has no such server.
fn port_free(port: u16) -> bool {
    let free = |bound: std::io::Result<TcpListener>| match bound {
        Ok(_) => true,
        // Inside a job whose policy refuses binding (job/nest.rs): nothing tells whether a port
        // is in use, and the blocks of the user's state are not in sight, so a block is drawn by
        // its lock alone (never the outer job's own).
        Err(e) => {
            e.kind() == std::io::ErrorKind::PermissionDenied && crate::job::nest::outer().is_some()
        }
    };
    if !free(TcpListener::bind((Ipv4Addr::UNSPECIFIED, port))) {
        return false;
    }
    match TcpListener::bind((Ipv6Addr::UNSPECIFIED, port)) {
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EAFNOSUPPORT | libc::EADDRNOTAVAIL)
            ) =>
        {
            true
        }
        bound => free(bound),
    }
}

/// The block of the job this one runs inside, which is that job's.
fn outer_block() -> Option<u16> {
    crate::job::nest::outer()?;
    std::env::var("ISOLATE_PORT").ok()?.parse().ok()
}
