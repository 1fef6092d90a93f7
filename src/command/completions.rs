//! `completions SHELL`, `man`, and the job ids the completion scripts ask for. The scripts and the
//! page are generated from the clap definitions (cli.rs), so they cannot drift from the commands;
//! each script gets a few lines that complete a JOB argument from the state directory.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::error::{Error, Result};
use crate::job::store;

/// The subcommands whose first argument (every argument for `merge`) is a job.
const TAKE_A_JOB: &str = "status logs wait stop rm import merge sync attach exec";

pub fn run(args: CompletionsArgs) -> Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "isolate", &mut script);
    let mut script = String::from_utf8_lossy(&script).into_owned();
    match args.shell {
        Shell::Bash => {
            script.push_str(&BASH.replace("{TAKE_A_JOB}", &TAKE_A_JOB.replace(' ', "|")))
        }
        Shell::Fish => script.push_str(&FISH.replace("{TAKE_A_JOB}", TAKE_A_JOB)),
        Shell::Zsh => script = zsh(&script),
        _ => {}
    }
    write(script.as_bytes())
}

/// isolate(1), or isolate-COMMAND(1) for `args.command`.
pub fn man(args: ManArgs) -> Result<i32> {
    let mut command = Cli::command();
    command.build();
    let command = match &args.command {
        None => command,
        Some(name) => command
            .find_subcommand(name)
            .filter(|sub| !sub.is_hide_set())
            .cloned()
            .map(|sub| {
                // One page per process: the name lives as long as it.
                let page: &'static str = format!("isolate-{}", sub.get_name()).leak();
                sub.name(page)
            })
            .ok_or_else(|| Error::Usage(format!("man {name:?}: there is no such command")))?,
    };
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut page)
        .map_err(|e| Error::System("cannot render the manual page", e))?;
    write(&page)
}

/// The ids of the jobs on record, one per line, sorted; nothing when there is no state yet.
pub fn jobs() -> Result<i32> {
    let state = store::state_dir()?;
    let mut ids: Vec<String> = std::fs::read_dir(store::jobs_dir(&state))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| !name.starts_with('.'))
        .collect();
    ids.sort();
    let mut text = ids.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    write(text.as_bytes())
}

fn write(bytes: &[u8]) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(0),
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(Error::System("cannot write to stdout", e)),
    }
}

/// zsh: a JOB argument completes the ids instead of files.
fn zsh(script: &str) -> String {
    let mut out: String = script
        .lines()
        .map(|line| {
            let job = line.contains("':job -- ") || line.contains("'*::jobs -- ");
            match job {
                true => line.replace(":_default'", ":_isolate_jobs'"),
                false => line.replace(":JOB:_default'", ":JOB:_isolate_jobs'"),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    out.push('\n');
    out.insert_str(0, ZSH_JOBS);
    out
}

const BASH: &str = r#"
# Job ids from the state directory for a JOB argument; the rest as generated above.
_isolate_with_jobs() {
    local cur="${COMP_WORDS[COMP_CWORD]}"
    case "${COMP_WORDS[1]}" in
        {TAKE_A_JOB})
            if [[ "$cur" != -* ]] && { [[ $COMP_CWORD -eq 2 ]] || [[ "${COMP_WORDS[1]}" == merge ]]; }; then
                COMPREPLY=( $(compgen -W "$(isolate __complete-jobs 2>/dev/null)" -- "$cur") )
                return 0
            fi
            ;;
    esac
    _isolate "$@"
}
complete -F _isolate_with_jobs -o nosort -o bashdefault -o default isolate
"#;

const FISH: &str = r#"
# Job ids from the state directory for a JOB argument.
complete -c isolate -n "__fish_seen_subcommand_from {TAKE_A_JOB}" -f -a "(isolate __complete-jobs 2>/dev/null)"
"#;

const ZSH_JOBS: &str = r#"#compdef isolate
_isolate_jobs() {
    local -a ids
    ids=(${(f)"$(isolate __complete-jobs 2>/dev/null)"})
    compadd -a ids
}
"#;
