//! Whether isolate shows progress lines (docs/cli.md): only on a terminal, and only when the
//! command speaks to a human (not with `-q` or `--json`). Set once by the command; read where the
//! long work is (the worktree's checkout, the import, `merge` of several jobs).

use std::sync::atomic::{AtomicBool, Ordering};

static WANTED: AtomicBool = AtomicBool::new(false);

/// The command says whether it speaks to a human; progress shows when it does and stderr is a
/// terminal.
pub fn want(human: bool) {
    // SAFETY: isatty only queries the descriptor.
    let terminal = unsafe { libc::isatty(2) == 1 };
    WANTED.store(human && terminal, Ordering::Relaxed);
}

pub fn wanted() -> bool {
    WANTED.load(Ordering::Relaxed)
}
