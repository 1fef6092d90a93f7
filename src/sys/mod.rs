//! The operating system's mechanics, each written once for every layer above: atomic files,
//! forking into a cgroup, close-on-exec pipes, pidfds and the bounded wait on one, a process's
//! identity in `/proc`, lock files, a locked directory's mode, a tree removed by descriptor, and
//! where the user's configuration and state live. Nothing here knows what a job is.

pub mod atomic;
pub mod clone;
pub mod dirs;
pub mod listener;
pub mod lock;
pub mod mode;
pub mod pidfd;
pub mod pipe;
pub mod proc_view;
pub mod process;
pub mod progress;
pub mod remove;
