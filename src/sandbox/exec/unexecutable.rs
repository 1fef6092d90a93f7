//! Why exec of CMD failed, in words that name the file the sandbox kept the job from. Reads only;
//! never opens a file in a way that could wait (a FIFO given as CMD).

use std::os::unix::fs::OpenOptionsExt;

use crate::sandbox::agent;

/// Why exec of `command` failed with `err`, naming the file the sandbox kept the job from: the
/// command's real executable, or the interpreter its `#!` line names.
pub(super) fn unexecutable(command: &str, err: &std::io::Error) -> String {
    let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
    let path = std::env::var("PATH").ok();
    let Some(executable) = agent::resolve(command, &cwd, path.as_deref()) else {
        return err.to_string();
    };
    let denied = |file: &std::path::Path| {
        format!(
            "{err}: the job may not read or execute {} (a read rule in the policy, or \
             `installation = true`, grants it)",
            file.display()
        )
    };
    // Without waiting: a FIFO given as CMD must not hang the helper.
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&executable);
    match opened {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return denied(&executable),
        Err(_) => return format!("{err}: {}", executable.display()),
        Ok(_) => {}
    }
    let Some(head) = agent::head(&executable) else {
        return format!("{err}: {}", executable.display());
    };
    let n = head.len().min(256);
    let Some(line) = head[..n].strip_prefix(b"#!") else {
        return format!("{err}: {}", executable.display());
    };
    let line = String::from_utf8_lossy(line.split(|&b| b == b'\n').next().unwrap_or_default());
    let mut words = line.split_whitespace();
    let interpreter = match (words.next(), words.next()) {
        (Some(env), Some(program)) if env.ends_with("/env") => {
            agent::resolve(program, &cwd, path.as_deref())
        }
        (Some(program), _) => std::fs::canonicalize(program).ok(),
        _ => None,
    };
    match interpreter {
        Some(interpreter) if agent::head(&interpreter).is_none() => format!(
            "{} (a script for {})",
            denied(&interpreter),
            executable.display()
        ),
        _ => format!("{err}: {}", executable.display()),
    }
}
