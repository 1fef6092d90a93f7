//! A connect to a path-named unix socket: the file resolved once as the caller would, decided on
//! its inode (named by the policy, or served by the job), and the decision cached with the inode
//! pinned. It never connects to anything but the very file it checked.

use std::os::fd::AsRawFd;
use std::sync::Arc;

use super::resolve::resolve;
use super::{connect_to, serving, Unix, CACHE};
use crate::sandbox::notify::Answer;
use crate::supervise::broker::caller::Caller;
use crate::supervise::broker::listeners;
use crate::supervise::broker::Verdict;

impl Unix {
    /// The verdict on connecting `caller`'s socket to the socket file at `path`.
    pub(super) fn connect_path(&mut self, caller: &Caller, path: &[u8]) -> Verdict {
        let file = match resolve(caller, path) {
            Ok(file) => Arc::new(file),
            Err(errno) => return Verdict::Done(Answer::Errno(errno)),
        };
        // SAFETY: fstat fills `st`, which outlives the call.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat writes one stat into `st`, which outlives the call; `file` is ours.
        if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } != 0 {
            return Verdict::Done(Answer::Errno(libc::EIO));
        }
        if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
            return Verdict::Done(Answer::Errno(libc::ECONNREFUSED));
        }
        if self.named_by_policy(&file) {
            return connect_to(&file);
        }
        let key = (st.st_dev, st.st_ino);
        if let Some((pinned, own)) = self.files.get(&key) {
            return match own {
                true => connect_to(pinned),
                false => Verdict::Refused,
            };
        }
        // The sockets a connect to this file reaches, as sock_diag names them. None: no listener
        // (the kernel would refuse), or one served where sock_diag cannot see (another network
        // namespace): refused either way, never connected unchecked. Several (btrfs subvolumes
        // share a superblock, and so inode numbers): each must be the job's.
        let Ok(wanted) = listeners::identity(&file, Some(caller.tid())) else {
            return Verdict::Refused;
        };
        let serving = match serving(|b| b.file == Some(wanted)) {
            Ok(serving) => serving,
            Err(verdict) => return verdict,
        };
        let own = serving
            .iter()
            .all(|b| listeners::held_by_job(b.socket, &self.members));
        let answer = match own {
            true => connect_to(&file),
            false => Verdict::Refused,
        };
        if self.files.len() >= CACHE {
            self.files.clear();
        }
        self.files.insert(key, (file, own));
        answer
    }
}
