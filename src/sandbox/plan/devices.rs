//! The devices a job may use: the few it uses whole whatever its policy says, and the few a read
//! rule over `/dev` grants there. Never a device that holds anything of anyone's.

use std::path::PathBuf;

/// The devices every job may use whole (`Access::Device`): git refuses to start without
/// `/dev/null`; `/dev/ptmx` makes the job's own ptys (their other ends come from the seccomp
/// layer's broker, `TIOCGPTPEER`); `/dev/tty` is the controlling terminal, only ever one of the
/// job's own.
pub const DEVICES: [&str; 3] = ["/dev/null", "/dev/ptmx", "/dev/tty"];

/// What a read rule over `/dev` grants there: devices that hold nothing of anyone's. Never the
/// rest, for `/dev` is where the user's terminals are (reading one takes the keystrokes typed
/// there), and input, sound and video devices, which the user's groups may open; nor `/dev/shm`,
/// which holds the user's POSIX shared memory and semaphores (a browser's, an editor's), and where
/// a job, which may not write there, has nothing of its own to read.
pub const DEVICE_READS: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Those of `devices` this machine has.
pub(super) fn present(devices: &[&str]) -> Vec<PathBuf> {
    devices
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect()
}
