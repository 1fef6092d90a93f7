//! The broker thread's loop: it waits for the next call the filter hands over, has it decided
//! (decide.rs), and answers it, counting refusals, or hands a connect that may block to a worker.
//! It ends when no process of the job is left under the filter; it never answers a call twice.

use std::os::fd::AsFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::caller::Callers;
use super::connection::{Made, Workers};
use super::decide::decide;
use super::decided::{Decided, Decision, Kind};
use super::{listeners, unix, Counts, Verdict};
use crate::sandbox::notify::{Answer, Call, Listener};
use crate::sandbox::plan::Sockets;

/// The broker thread's loop (signals stay with the supervisor's main thread, capabilities are
/// dropped: `quiet`).
pub(super) fn serve(
    listener: Arc<Listener>,
    sockets: Sockets,
    members: listeners::Members,
    counts: Arc<Counts>,
) {
    let mut unix = unix::Unix::new(
        sockets.unix_allowed.clone(),
        sockets.abstract_scoped,
        members,
    );
    let workers = Workers::default();
    let mut callers = Callers::default();
    loop {
        let mut fds = [PollFd::new(listener.fd().as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return,
        }
        let events = fds[0].revents().unwrap_or(PollFlags::empty());
        if !events.contains(PollFlags::POLLIN) && !events.is_empty() {
            // No process of the job is left under the filter.
            return;
        }
        let call = match listener.receive() {
            Ok(Some(call)) => call,
            Ok(None) => continue,
            Err(_) => return,
        };
        let mut judge =
            |callers: &mut Callers| decide(&listener, &call, &sockets, &mut unix, callers);
        let decided = match judge(&mut callers) {
            Decision::Decided(decided) => decided,
            // A kept pidfd whose thread had died: the caller reused its id; once more, afresh.
            Decision::Stale => {
                callers.forget(call.tid);
                match judge(&mut callers) {
                    Decision::Decided(decided) => decided,
                    Decision::Stale | Decision::Gone => continue,
                }
            }
            Decision::Gone => continue,
        };
        answer(
            &listener,
            call,
            decided,
            &counts,
            (&workers, unix.members()),
        );
    }
}

/// Answers `call` as `decided` says, or hands its connect to a worker.
fn answer(
    listener: &Arc<Listener>,
    call: Call,
    decided: Decided,
    counts: &Counts,
    (workers, members): (&Workers, &listeners::Members),
) {
    // The broker's copy of the caller's socket is closed before the answer: once answered, the
    // job may close its own and bind the address again, which a copy left open would still hold.
    let Decided {
        verdict,
        kind,
        socket,
        addr,
    } = decided;
    let socket = match verdict {
        Verdict::Connect | Verdict::ConnectOwn(_) | Verdict::ConnectTo(_) => socket,
        _ => {
            drop(socket);
            None
        }
    };
    match (verdict, socket) {
        (Verdict::Done(answer), _) => listener.answer(&call, answer),
        (Verdict::Send(fd, cloexec), _) => listener.answer_with_fd(&call, &fd, cloexec),
        (verdict @ (Verdict::Refused | Verdict::RefusedAs(_)), _) => {
            let count = match kind {
                Kind::Unix => &counts.unix_connect,
                Kind::Tcp => &counts.tcp_connect,
                Kind::Listen => &counts.listen,
                Kind::Ipc => &counts.ipc,
                Kind::Process => &counts.process,
            };
            count.fetch_add(1, Ordering::Relaxed);
            if matches!(kind, Kind::Unix | Kind::Tcp) {
                counts.note(&addr);
            }
            let errno = match verdict {
                Verdict::RefusedAs(errno) => errno,
                _ => libc::EACCES,
            };
            listener.answer(&call, Answer::Errno(errno));
        }
        (Verdict::Connect, Some(socket)) => {
            let unix = matches!(kind, Kind::Unix);
            workers.connect(listener, call, socket, unix, addr, Made::As)
        }
        (Verdict::ConnectOwn(port), Some(socket)) => {
            let checked = Made::Checked(port, members.clone());
            workers.connect(listener, call, socket, false, addr, checked)
        }
        (Verdict::ConnectTo(file), Some(socket)) => {
            let addr = unix::address_of(&file);
            workers.connect(
                listener,
                call,
                socket,
                true,
                addr,
                Made::Keeping { _file: file },
            )
        }
        (Verdict::Connect | Verdict::ConnectOwn(_) | Verdict::ConnectTo(_), None) => {
            listener.answer(&call, Answer::Errno(libc::EBADF))
        }
    }
}
