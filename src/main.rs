//! isolate: parse the command line, run the command, exit with its status.

use std::ffi::OsString;

use clap::error::ErrorKind;
use clap::Parser;
use isolate::{cli, command, sandbox};

fn main() {
    let argv: Vec<OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == sandbox::exec::ARG) {
        let rest: Vec<String> = argv[2..]
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        sandbox::exec::main(&rest);
    }
    let cli = match cli::Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            let is_run = argv
                .iter()
                .skip(1)
                .find(|a| !a.to_string_lossy().starts_with('-'));
            let code = match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
                // `run` shares its status space with CMD: its own usage errors are 125 (docs/cli.md).
                _ if is_run.is_some_and(|a| a == "run") => 125,
                _ => 2,
            };
            std::process::exit(code);
        }
    };
    std::process::exit(command::dispatch(cli));
}
