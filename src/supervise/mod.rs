//! The supervisor: it starts the job (spawn/), owns `waitpid` for the whole tree, forwards
//! signals, enforces the timeout, and when the main process ends stops whatever the job left behind
//! (the one stop sequence, stop/), so that nothing of the tree outlives its record.

pub mod attach;
pub mod background;
pub mod broker;
pub mod cgroup;
pub mod forward;
pub mod helper;
pub mod interactive;
pub mod log;
pub mod namespaces;
pub mod ports;
pub mod proxy;
pub mod pty;
pub mod reaper;
pub mod relay;
pub mod spawn;
pub mod stop;
pub mod tree;
