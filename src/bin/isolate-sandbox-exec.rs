//! The pre-exec helper on its own (src/sandbox/exec/): `isolate-sandbox-exec __sandbox-exec -- CMD`,
//! the same arguments as `isolate __sandbox-exec -- CMD`. It links only what restricting a process
//! needs, so the exec that every job pays twice costs a fraction of isolate's own.

use isolate::sandbox::exec;

fn main() {
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if argv.get(1).is_some_and(|a| a == exec::ARG) {
        exec::main(&argv[2..]);
    }
    eprintln!("isolate-sandbox-exec is internal to isolate: isolate run starts it");
    std::process::exit(exec::SETUP_FAILED.into());
}
