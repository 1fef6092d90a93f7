//! `isolate attach JOB`: the user's terminal connected to a running job's own (started with
//! `--tty`) until the detach key is pressed twice (the job runs on), another attach takes over, or
//! the job ends (then the status is the job's, as `wait` gives it).

use std::path::Path;
use std::time::Duration;

use crate::cli::AttachArgs;
use crate::error::{Error, Result};
use crate::job::record::{Record, State};
use crate::job::store;
use crate::supervise::attach::{attach, Left, SOCKET};

/// The detach key when none is given: Ctrl-\ (no agent binds it; a shell's SIGQUIT key).
pub const DEFAULT_KEY: &str = "ctrl-\\";

pub fn run(args: AttachArgs) -> Result<i32> {
    let state = store::state_dir()?;
    let (job_dir, record) = store::resolve(&state, &args.job)?;
    let key = detach_key(&args.detach_key)?;
    attach_to(&job_dir, &record, key, &args.detach_key)
}

/// Attaches to the job of `record` (in `job_dir`); `key` pressed twice detaches.
pub fn attach_to(job_dir: &Path, record: &Record, key: u8, named: &str) -> Result<i32> {
    let refuse = |why: &str| Error::Job {
        job: record.id.clone(),
        why: why.into(),
    };
    match record.effective_state() {
        State::Running => {}
        State::Queued => {
            return Err(refuse(
                "is queued: it has no terminal until it starts (isolate ps shows when it runs)",
            ))
        }
        _ => {
            return Err(refuse(
                "is not running (isolate logs shows what it printed)",
            ))
        }
    }
    let socket = job_dir.join(SOCKET);
    if !socket.exists() {
        return Err(refuse(
            "has no terminal to attach to: it was started without --tty (isolate logs -f follows its output)",
        ));
    }
    // SAFETY: isatty only queries the descriptor.
    if unsafe { libc::isatty(0) } != 1 {
        return Err(Error::Usage(
            "attach needs a terminal: standard input is not one".into(),
        ));
    }
    say!(
        "isolate: attached to {}; detach with {named} twice",
        record.id
    );
    let left = attach(&socket, key).map_err(|e| Error::System("cannot attach to the job", e))?;
    match left {
        Left::Detached => {
            say!(
                "\r\nisolate: detached from {id}; it runs on (isolate attach {id})",
                id = record.id
            );
            Ok(0)
        }
        Left::Signalled(signal) => {
            say!(
                "\r\nisolate: detached from {id} (signal {signal}); it runs on (isolate attach {id})",
                id = record.id
            );
            Ok(128 + signal)
        }
        Left::Released => {
            let now = store::await_end(job_dir, Some(Duration::from_secs(10)))?;
            match now.effective_state() {
                State::Running => {
                    say!(
                        "\r\nisolate: {} was attached from another terminal",
                        record.id
                    );
                    Ok(0)
                }
                state => {
                    say!("\r\nisolate: job {} {state}", record.id);
                    crate::command::run::end_block(&now);
                    Ok(now.exit_status().unwrap_or(1))
                }
            }
        }
    }
}

/// `ctrl-X` (X a letter, or one of `@ [ \ ] ^ _`) as the control byte it sends.
pub fn detach_key(name: &str) -> Result<u8> {
    let bad = || {
        Error::Usage(format!(
            "--detach-key {name:?}: expected ctrl- and a letter or one of @ [ \\ ] ^ _ (default {DEFAULT_KEY})"
        ))
    };
    let rest = name
        .strip_prefix("ctrl-")
        .or_else(|| name.strip_prefix("C-"))
        .ok_or_else(bad)?;
    match rest.as_bytes() {
        [c @ b'a'..=b'z'] => Ok(c - b'a' + 1),
        [c @ (b'@' | b'[' | b'\\' | b']' | b'^' | b'_')] => Ok(c - b'@'),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::detach_key;

    #[test]
    fn detach_keys_are_control_bytes() {
        assert_eq!(detach_key("ctrl-\\").unwrap(), 0x1c);
        assert_eq!(detach_key("ctrl-]").unwrap(), 0x1d);
        assert_eq!(detach_key("ctrl-a").unwrap(), 0x01);
        assert!(detach_key("x").is_err());
        assert!(detach_key("ctrl-1").is_err());
    }
}
