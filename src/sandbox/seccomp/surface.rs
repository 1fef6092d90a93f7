//! The filter's rules on the rest of the kernel: input pushed into terminals, a call made
//! harmless (`PR_SET_DUMPABLE`), leases, inode flags and filesystem ioctls on the user's files,
//! and the kernel surface a job never needs (io_uring, user namespaces, keyrings, System V IPC,
//! other processes' limits and priorities, system calls newer than this build).

use super::bpf::{CmpOp, Filter, FilterAction, FilterError};
use super::filter::{arg, refuse, sys, INT};
use crate::sandbox::plan::{Judge, Sockets};

/// `ioprio_set`'s `which`: one process, a process group, every process of a uid.
const IOPRIO_WHO_PROCESS: u64 = 1;
const IOPRIO_WHO_PGRP: u64 = 2;
const IOPRIO_WHO_USER: u64 = 3;

/// Input pushed into a terminal. With `--no-pty` the job may make a terminal passed through to it
/// (one no session controls) its own controlling terminal, where `TIOCSTI` would type what the
/// terminal's next reader runs outside the sandbox; `TIOCLINUX` pastes a console's selection.
/// Refused on every terminal, whatever `dev.tty.legacy_tiocsti` says.
pub(super) fn terminal_input(ctx: &mut Filter) -> Result<(), FilterError> {
    // (libc's ioctl numbers are u64 here and i32 elsewhere.)
    #[allow(clippy::unnecessary_cast)]
    refuse_ioctls(ctx, &[libc::TIOCSTI as u64, libc::TIOCLINUX as u64])
}

/// `ioctl` with any of `requests` refused (`EPERM`), on every descriptor.
fn refuse_ioctls(ctx: &mut Filter, requests: &[u64]) -> Result<(), FilterError> {
    for &request in requests {
        ctx.add_rule_conditional(
            refuse(libc::EPERM),
            sys(libc::SYS_ioctl)?,
            &[arg(1, CmpOp::MaskedEqual(INT), request)],
        )?;
    }
    Ok(())
}

/// `prctl(PR_SET_DUMPABLE, 0)` succeeds and does nothing: a process that is not dumpable cannot
/// have its memory read or its descriptors taken by a supervisor without `CAP_SYS_PTRACE` (an
/// ordinary user's), so every call the broker judges for it would be refused. ssh-agent and
/// gpg-agent make themselves so, then bind and listen. The job's other processes could read such
/// a process's memory anyway: they are in its Landlock domain.
pub(super) fn dumpable(ctx: &mut Filter) -> Result<(), FilterError> {
    ctx.add_rule_conditional(
        FilterAction::Errno(0),
        sys(libc::SYS_prctl)?,
        &[
            arg(0, CmpOp::MaskedEqual(INT), libc::PR_SET_DUMPABLE as u64),
            arg(1, CmpOp::Equal, 0),
        ],
    )?;
    Ok(())
}

/// `FS_IOC_SETFLAGS` (as `long` and as `int`), `FS_IOC_FSSETXATTR`, `FS_IOC_SETVERSION`: inode
/// flags and the like, which the kernel lets a file's owner set through a descriptor opened only
/// for reading (Landlock's ioctl right covers devices alone). Then fscrypt's and fs-verity's, which
/// ask no more: `FS_IOC_SET_ENCRYPTION_POLICY` (a directory of the user's that takes no new file
/// until deleted), `FS_IOC_ADD_ENCRYPTION_KEY`, `FS_IOC_REMOVE_ENCRYPTION_KEY` and its
/// `_ALL_USERS` (the user's claim on a key removed: their unlocked directories locked),
/// `FS_IOC_ENABLE_VERITY` (a file of the user's that can never be written again). And those of one
/// filesystem that ask as little: ext4's `EXT4_IOC_SETVERSION` (as `long` and as `int`), FAT's
/// `FAT_IOCTL_SET_ATTRIBUTES` (read-only, hidden, system).
const INODE_FLAGS: [u64; 12] = [
    0x4008_6602,
    0x4004_6602,
    0x401c_5820,
    0x4008_7602,
    0x4008_6604,
    0x4004_6604,
    0x4004_7211,
    0x800c_6613,
    0xc050_6617,
    0xc040_6618,
    0xc040_6619,
    0x4080_6685,
];

/// btrfs's ioctls (type 0x94): `BTRFS_IOC_SUBVOL_CREATE` and `BTRFS_IOC_SNAP_CREATE_V2` make a
/// subvolume, or a snapshot of one the job filled, in any directory of the user's the job may
/// only read (the kernel checks the owner's permission, and no Landlock hook sees the entry made);
/// others destroy subvolumes or make them read-only. Refused but for those every filesystem shares
/// that write only through a descriptor opened for writing, leave content as it is, or read:
/// `FICLONE`, `FICLONERANGE` (`cp --reflink`), `FIDEDUPERANGE` and `FS_IOC_GETFSLABEL`.
/// (`FS_IOC_SETFSLABEL` needs `CAP_SYS_ADMIN`, which no job has.)
const BTRFS: (u64, &[u64]) = (0x94, &[9, 13, 49, 54]);
/// bcachefs's (type 0xbc), whose subvolume calls are btrfs's again: all refused.
const BCACHEFS: (u64, &[u64]) = (0xbc, &[]);

/// What a job may not do to the user's files through a descriptor it may only read: a lease, which
/// holds every writer's `open` of the file for `fs.lease-break-time` (45 s) and is taken again at
/// once (the user's `git commit` took 90 s: two reflog appends); inode flags (`chattr +S`: every
/// later write synchronous; `+d`: left out of backups). The kernel allows both to the file's owner,
/// which the job is.
pub(super) fn file_owner(ctx: &mut Filter) -> Result<(), FilterError> {
    ctx.add_rule_conditional(
        refuse(libc::EACCES),
        sys(libc::SYS_fcntl)?,
        &[arg(1, CmpOp::MaskedEqual(INT), libc::F_SETLEASE as u64)],
    )?;
    refuse_ioctls(ctx, &INODE_FLAGS)?;
    for (kind, shared) in [BTRFS, BCACHEFS] {
        refuse_ioctl_type(ctx, kind, shared)?;
    }
    // `file_setattr(2)` (Linux 6.17) sets by path what `FS_IOC_FSSETXATTR` sets.
    ctx.add_rule(refuse(libc::EPERM), sys(FILE_SETATTR)?)?;
    Ok(())
}

/// `file_setattr`, the same number on every architecture (the table they share since 5.1).
const FILE_SETATTR: libc::c_long = 469;

/// Every `ioctl` of type `kind` refused (`EPERM`), whatever its direction and size, but those
/// numbered in `except`.
fn refuse_ioctl_type(ctx: &mut Filter, kind: u64, except: &[u64]) -> Result<(), FilterError> {
    for (mask, number) in blocks_without(except) {
        ctx.add_rule_conditional(
            refuse(libc::EPERM),
            sys(libc::SYS_ioctl)?,
            &[arg(
                1,
                CmpOp::MaskedEqual(0xff00 | mask),
                kind << 8 | number,
            )],
        )?;
    }
    Ok(())
}

/// The numbers 0 to 255 but `except`, as aligned blocks a mask can match: (mask, first number).
fn blocks_without(except: &[u64]) -> Vec<(u64, u64)> {
    fn split(first: u64, len: u64, except: &[u64], out: &mut Vec<(u64, u64)>) {
        if !except.iter().any(|n| (first..first + len).contains(n)) {
            out.push((!(len - 1) & 0xff, first));
        } else if len > 1 {
            split(first, len / 2, except, out);
            split(first + len / 2, len / 2, except, out);
        }
    }
    let mut out = Vec::new();
    split(0, 256, except, &mut out);
    out
}

/// io_uring, user namespaces and keyrings.
pub(super) fn kernel_surface(ctx: &mut Filter, sockets: &Sockets) -> Result<(), FilterError> {
    // io_uring performs socket (and file) operations without system calls this filter sees.
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        ctx.add_rule(refuse(libc::ENOSYS), sys(call)?)?;
    }
    // A new user namespace brings capabilities inside it (netfilter, mounts in a new namespace:
    // kernel surface, and nothing a job can use under Landlock, which refuses mounts anyway).
    let newuser = libc::CLONE_NEWUSER as u64;
    for call in [libc::SYS_unshare, libc::SYS_clone] {
        ctx.add_rule_conditional(
            refuse(libc::EPERM),
            sys(call)?,
            &[arg(0, CmpOp::MaskedEqual(newuser), newuser)],
        )?;
    }
    // clone3 passes its flags in memory: as if the kernel lacked it, so that libc falls back to
    // clone, whose flags the rule above sees.
    ctx.add_rule(refuse(libc::ENOSYS), sys(libc::SYS_clone3)?)?;
    // The user's session and user keyrings (Kerberos tickets, cached passwords).
    for call in [libc::SYS_keyctl, libc::SYS_add_key, libc::SYS_request_key] {
        ctx.add_rule(refuse(libc::EPERM), sys(call)?)?;
    }
    // System V IPC outside an IPC namespace of the job's own is the user's: no Landlock hook sees
    // it, and every segment, queue and semaphore set of the user's (`IPC_PRIVATE` ones too, by id)
    // could be read, written or removed. POSIX queues: `mq_open` is a path Landlock refuses,
    // `mq_unlink` is not. In the job's own IPC namespace (the namespaces tier) they are its own;
    // elsewhere the supervisor refuses them (EPERM) and counts them, so that the end of the job
    // can say what was refused (PostgreSQL's shared memory, a queue).
    if !sockets.private_ipc {
        let action = match sockets.judge {
            Judge::Supervisor => FilterAction::Notify,
            Judge::OuterJob => refuse(libc::EPERM),
        };
        for call in IPC {
            ctx.add_rule(action, sys(call)?)?;
        }
    }
    // Calls that act on another process by pid with only a uid check (no Landlock scope sees
    // them): limits (`RLIMIT_CPU` of 0 kills the supervisor, `RLIMIT_NOFILE` of 0 blinds it),
    // priority, scheduling, affinity, I/O priority. A job may set its own (pid or who 0, as libc
    // passes) and, judged by the supervisor, those of its own processes and threads (libzmq sets
    // its threads' scheduling by thread id, `renice -p $$` the shell's priority); never another's.
    let other = |index: u32| [arg(index, CmpOp::NotEqual, 0)];
    let judged = match sockets.judge {
        Judge::Supervisor => FilterAction::Notify,
        Judge::OuterJob => refuse(libc::EPERM),
    };
    for (call, pid) in BY_PID {
        match call {
            libc::SYS_prlimit64 => {
                ctx.add_rule_conditional(refuse(libc::EPERM), sys(call)?, &other(pid))?
            }
            // `which` names a process (judged), a process group (refused) or a user (refused
            // below): rules that never match the same call, so that no order decides between
            // them.
            libc::SYS_setpriority | libc::SYS_ioprio_set => {
                let (process, group) = match call {
                    libc::SYS_setpriority => (libc::PRIO_PROCESS as u64, libc::PRIO_PGRP as u64),
                    _ => (IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP),
                };
                let which = |w: u64| arg(0, CmpOp::MaskedEqual(INT), w);
                let named = arg(pid, CmpOp::NotEqual, 0);
                ctx.add_rule_conditional(judged, sys(call)?, &[which(process), named])?;
                ctx.add_rule_conditional(refuse(libc::EPERM), sys(call)?, &[which(group), named])?;
            }
            _ => ctx.add_rule_conditional(judged, sys(call)?, &other(pid))?,
        }
    }
    // For a user (`PRIO_USER`, `IOPRIO_WHO_USER`), who 0 is not the caller: it is every process
    // of the caller's uid (`setpriority`), or of root (`ioprio_set`). Refused whoever is named;
    // a process or a process group of 0 is the caller's own.
    for (call, user) in [
        (libc::SYS_setpriority, libc::PRIO_USER as u64),
        (libc::SYS_ioprio_set, IOPRIO_WHO_USER),
    ] {
        ctx.add_rule_conditional(
            refuse(libc::EPERM),
            sys(call)?,
            &[arg(0, CmpOp::MaskedEqual(INT), user)],
        )?;
    }
    // A system call newer than this build is one no rule here has judged (`file_setattr` came
    // with 6.17 and reached past every other refusal of inode flags): as if the kernel lacked it,
    // so that libc falls back to the calls judged here.
    for call in NEWEST_JUDGED + 1..=NEWEST_REFUSED {
        ctx.add_rule(refuse(libc::ENOSYS), sys(call)?)?;
    }
    Ok(())
}

/// System V IPC and POSIX message queues.
pub(crate) const IPC: [libc::c_long; 14] = [
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmctl,
    libc::SYS_shmdt,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_semctl,
    libc::SYS_mq_open,
    libc::SYS_mq_unlink,
];

/// The calls that name a process (their argument `.1`, 0 for the caller itself) to set its
/// limits, priority, scheduling or affinity.
pub(crate) const BY_PID: [(libc::c_long, u32); 7] = [
    (libc::SYS_prlimit64, 0),
    (libc::SYS_setpriority, 1),
    (libc::SYS_ioprio_set, 1),
    (libc::SYS_sched_setaffinity, 0),
    (libc::SYS_sched_setscheduler, 0),
    (libc::SYS_sched_setparam, 0),
    (libc::SYS_sched_setattr, 0),
];

/// The newest system call this filter was written against (`file_setattr`, Linux 6.17; 6.18 has
/// none newer), and the last number refused as newer than it.
const NEWEST_JUDGED: libc::c_long = FILE_SETATTR;
const NEWEST_REFUSED: libc::c_long = 511;

/// The calls that send a signal to another process, by pid, thread id or pidfd.
pub(crate) const SIGNALS: [libc::c_long; 6] = [
    libc::SYS_kill,
    libc::SYS_tkill,
    libc::SYS_tgkill,
    libc::SYS_rt_sigqueueinfo,
    libc::SYS_rt_tgsigqueueinfo,
    libc::SYS_pidfd_send_signal,
];

/// Below Landlock ABI 6 nothing in the kernel scopes a job's signals: every signal to another
/// process (a pid other than 0, the caller's own group) goes to the supervisor, which lets through
/// those to the job's own processes only.
pub(super) fn signals(ctx: &mut Filter, sockets: &Sockets) -> Result<(), FilterError> {
    if !sockets.judge_signals || sockets.judge != Judge::Supervisor {
        return Ok(());
    }
    for call in SIGNALS {
        match call {
            libc::SYS_kill => ctx.add_rule_conditional(
                FilterAction::Notify,
                sys(call)?,
                &[arg(0, CmpOp::NotEqual, 0)],
            )?,
            _ => ctx.add_rule(FilterAction::Notify, sys(call)?)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::blocks_without;

    #[test]
    fn the_blocks_cover_every_number_but_the_exceptions() {
        for except in [&[][..], &[9, 13, 54], &[0], &[255], &[0, 1, 2, 128]] {
            let blocks = blocks_without(except);
            for n in 0..256u64 {
                let matched = blocks
                    .iter()
                    .filter(|&&(mask, first)| n & mask == first)
                    .count();
                let want = usize::from(!except.contains(&n));
                assert_eq!(matched, want, "{n} with {except:?}: {blocks:?}");
            }
        }
        assert_eq!(blocks_without(&[]), vec![(0, 0)]);
    }
}
