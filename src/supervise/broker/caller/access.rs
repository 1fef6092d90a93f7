//! What the broker reaches of a caller through its pidfd: its memory at the call's arguments, read
//! once, and a duplicate of the descriptor it named. Every failure is the errno its call returns.

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::Caller;
use crate::supervise::broker::errno;

impl Caller {
    /// `len` bytes of the caller's memory at `addr` (EFAULT when it is not mapped, as the kernel
    /// says). The caller is blocked in its call; another thread of it may still write there, which
    /// is why what is read is read once and used as read.
    pub fn read(&self, addr: u64, len: usize) -> Result<Vec<u8>, i32> {
        let mut buf = vec![0u8; len];
        if len == 0 {
            return Ok(buf);
        }
        let local = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: len,
        };
        let remote = libc::iovec {
            iov_base: addr as *mut libc::c_void,
            iov_len: len,
        };
        // SAFETY: the local iovec covers `buf`; the remote one is only read by the kernel.
        let n = unsafe { libc::process_vm_readv(self.tid, &local, 1, &remote, 1, 0) };
        if n < 0 {
            return Err(match errno() {
                libc::EFAULT => libc::EFAULT,
                // Not allowed to look (a job process made itself non-dumpable): refuse the call.
                libc::EPERM => libc::EACCES,
                e => e,
            });
        }
        if n as usize != len {
            return Err(libc::EFAULT);
        }
        Ok(buf)
    }

    /// A duplicate of the caller's descriptor `fd`: the very socket it names now, whatever the job
    /// does with the number afterwards.
    pub fn take(&self, fd: u64) -> Result<OwnedFd, i32> {
        let Ok(fd) = i32::try_from(fd) else {
            return Err(libc::EBADF);
        };
        // SAFETY: pidfd_getfd returns a new close-on-exec descriptor or -1.
        let got =
            unsafe { libc::syscall(libc::SYS_pidfd_getfd, self.pidfd.as_fd().as_raw_fd(), fd, 0) };
        if got < 0 {
            return Err(match errno() {
                libc::EPERM => libc::EACCES,
                e => e,
            });
        }
        // SAFETY: a new descriptor nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(got as RawFd) })
    }
}
