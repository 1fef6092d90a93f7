//! The supervisor's loop, and the one owner of `waitpid`: it reaps every process of the tree (the
//! supervisor is a child subreaper), records the main process's status itself, forwards SIGINT,
//! SIGQUIT and SIGHUP to the job, runs the stop sequence on SIGTERM and on `--timeout`, and stops
//! whatever is left when the main process exits. It returns only when no process of the tree is left.

use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH};

use crate::error::{Error, Result};
use crate::job::record::Exit;
use crate::supervise::cgroup::Cgroup;
use crate::supervise::interactive::Terminal;
use crate::supervise::stop::{Processes, Stop, Tree};

/// How often the tree is walked again while stopping, for processes forked in the meantime.
const RESCAN: Duration = Duration::from_millis(50);

/// Signals the supervisor reacts to: a flag per signal, and a self-pipe that wakes the loop.
pub struct Signals {
    read: UnixStream,
    flags: Vec<(i32, Arc<AtomicBool>)>,
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    /// Installs the handlers. Call before spawning the job, so no signal is lost in between.
    pub fn install() -> Result<Signals> {
        let fail = |e| Error::System("cannot install signal handlers", e);
        let (read, write) = UnixStream::pair().map_err(fail)?;
        read.set_nonblocking(true).map_err(fail)?;
        write.set_nonblocking(true).map_err(fail)?;
        let mut signals = Signals {
            read,
            flags: Vec::new(),
            ids: Vec::new(),
        };
        for sig in [SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGWINCH] {
            let flag = Arc::new(AtomicBool::new(false));
            // The flag first, so that it is set by the time the pipe wakes the loop.
            signals
                .ids
                .push(signal_hook::flag::register(sig, Arc::clone(&flag)).map_err(fail)?);
            let waker = write.try_clone().map_err(fail)?;
            signals
                .ids
                .push(signal_hook::low_level::pipe::register(sig, waker).map_err(fail)?);
            signals.flags.push((sig, flag));
        }
        Ok(signals)
    }

    /// The signals received since the last call, emptying the pipe.
    fn drain(&mut self) -> Vec<i32> {
        let mut buf = [0u8; 64];
        while let Ok(1..) = self.read.read(&mut buf) {}
        self.flags
            .iter()
            .filter(|(_, flag)| flag.swap(false, Ordering::SeqCst))
            .map(|(sig, _)| *sig)
            .collect()
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// How the job ended.
#[derive(Debug, Clone, Copy)]
pub struct Ending {
    pub exit: Exit,
    /// The `--timeout` stopped it.
    pub timed_out: bool,
}

/// Supervises the job whose main process is `main` until nothing of its tree is left.
pub fn supervise(
    main: Pid,
    signals: &mut Signals,
    timeout: Option<Duration>,
    grace: Duration,
    cgroup: Option<&Cgroup>,
    mut terminal: Option<&mut dyn Terminal>,
) -> Ending {
    let me = Pid::this();
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut exit: Option<Exit> = None;
    let mut timed_out = false;
    let tree = Tree {
        processes: Some(Processes::DescendantsOf(me)),
        cgroup,
    };
    let mut stopping: Option<Stop> = None;
    let begin_stop = |stopping: &mut Option<Stop>| {
        stopping.get_or_insert_with(|| Stop::new(grace));
    };

    loop {
        // Reap everything that has ended; ECHILD means the tree is empty.
        let empty = loop {
            match waitpid(
                Pid::from_raw(-1),
                Some(WaitPidFlag::WNOHANG | WaitPidFlag::WUNTRACED),
            ) {
                Ok(WaitStatus::Exited(pid, code)) if pid == main => {
                    exit = Some(Exit {
                        code: Some(code),
                        signal: None,
                    })
                }
                Ok(WaitStatus::Signaled(pid, sig, _)) if pid == main => {
                    exit = Some(Exit {
                        code: None,
                        signal: Some(sig as i32),
                    })
                }
                // Ctrl-Z on the job's own terminal stopped it: stop isolate too, until `fg`.
                Ok(WaitStatus::Stopped(pid, _)) if pid == main && stopping.is_none() => {
                    if let Some(t) = terminal.as_deref_mut() {
                        t.suspend();
                        let _ = kill(Pid::from_raw(-main.as_raw()), Signal::SIGCONT);
                        if let Some(group) = t.foreground() {
                            let _ = kill(Pid::from_raw(-group.as_raw()), Signal::SIGCONT);
                        }
                    }
                }
                Ok(WaitStatus::StillAlive) => break false,
                Ok(_) => continue,
                Err(Errno::EINTR) => continue,
                Err(_) => break true,
            }
        };
        if empty {
            break;
        }
        if exit.is_some() {
            // The main process is gone: the rest of its tree goes too.
            begin_stop(&mut stopping);
        }

        let now = Instant::now();
        if let Some(d) = deadline {
            if now >= d && !timed_out && exit.is_none() {
                timed_out = true;
                begin_stop(&mut stopping);
            }
        }
        if let Some(s) = &mut stopping {
            s.round(&tree);
        }

        let mut wait = match &stopping {
            Some(_) => RESCAN,
            None => Duration::from_secs(3600),
        };
        if let (Some(d), None) = (deadline, &stopping) {
            wait = wait.min(d.saturating_duration_since(now));
        }
        let mut fds = [PollFd::new(signals.read.as_fd(), PollFlags::POLLIN)];
        let ms = wait.as_millis().clamp(1, i32::MAX as u128) as i32;
        let _ = poll(
            &mut fds,
            PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
        );
        for sig in signals.drain() {
            match sig {
                SIGTERM => {
                    begin_stop(&mut stopping);
                    if let Some(s) = &mut stopping {
                        s.round(&tree);
                    }
                }
                // The user's terminal hung up: in interactive mode that ends the job.
                SIGHUP if terminal.is_some() => {
                    begin_stop(&mut stopping);
                    if let Some(s) = &mut stopping {
                        s.round(&tree);
                    }
                }
                SIGWINCH => {
                    if let Some(t) = terminal.as_deref_mut() {
                        t.resized();
                    }
                }
                SIGINT | SIGQUIT | SIGHUP => {
                    if let Ok(signal) = Signal::try_from(sig) {
                        // The job's main process leads its own process group (it called setsid).
                        let _ = kill(Pid::from_raw(-main.as_raw()), signal);
                    }
                }
                _ => {}
            }
        }
    }

    Ending {
        // The main process is always reaped before the tree is empty; the fallback is unreachable.
        exit: exit.unwrap_or(Exit {
            code: None,
            signal: Some(libc::SIGKILL),
        }),
        timed_out,
    }
}

impl Signals {
    /// The first stop signal (TERM, INT, HUP, QUIT) received so far, if any; used before the job
    /// starts, when there is nothing to forward it to.
    pub fn stop_requested(&mut self) -> Option<i32> {
        self.drain()
            .into_iter()
            .find(|s| [SIGTERM, SIGINT, SIGHUP, SIGQUIT].contains(s))
    }
}
