//! `isolate doctor`: what this kernel and git enforce, and every gap that remains.

use crate::cli::DoctorArgs;

pub fn run(_args: DoctorArgs) -> i32 {
    eprintln!("isolate: doctor is not built yet");
    1
}
