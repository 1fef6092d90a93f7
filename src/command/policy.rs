//! `isolate policy show`: a profile fully resolved.

use crate::cli::PolicyCommand;

pub fn run(_command: PolicyCommand) -> i32 {
    eprintln!("isolate: policy show is not built yet");
    1
}
