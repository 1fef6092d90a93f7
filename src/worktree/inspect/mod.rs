//! Read-only, in-process inspection of a job repository.
//!
//! A job repository is the "shared clone" isolate cut for an agent: `<worktree>/.git` is a plain git
//! directory whose `objects/info/alternates` points at the project's object store. The agent ran
//! inside that work tree with write access to all of it, `.git` included, so every byte of it is
//! untrusted. This module answers one question about it, "does it hold work?", by reading refs,
//! the index, the work tree and a few state files with gix.
//!
//! What it owns: opening the job repository (and, in [`missing_from`], the user's project
//! repository) the one safe way, and turning a status into counts.
//!
//! What it must never do:
//!
//! - **Execute anything planted in the repository.** gix runs no hooks and implements no
//!   fsmonitor, but it does run `filter.<driver>.clean` commands (and `process` filters) when a
//!   status has to hash a work-tree file whose stat data changed. So the repository is opened with
//!   a section filter that treats every repository-local configuration section as untrusted
//!   ([`gix::open::Options::filter_config_section`]; gix consults it for filter and diff drivers,
//!   `core.worktree`, `core.excludesFile`/`core.attributesFile`, replace-ref settings and a few
//!   more), *and* every `filter` and `diff` section is removed from the opened repository's
//!   configuration before the status runs, so no driver is known at all. Configuration includes
//!   are not followed (gix's isolated permissions), so an `[include] path = <project>/.git/config`
//!   contributes nothing, neither identity nor the project's own filter sections. No system,
//!   global or environment configuration is read, and no environment variable (`GIT_DIR`,
//!   `GIT_WORK_TREE`, `GIT_NO_REPLACE_OBJECTS`, ...) is consulted.
//! - **Follow redirections.** The git dir is `<worktree>/.git` and must be a real directory (not a
//!   symlink, not a gitfile, not a linked worktree with a `commondir` file); the work tree is
//!   `<worktree>` whatever `core.worktree` or `core.bare` say. Replace refs (`refs/replace/`) are
//!   not applied. Objects are found through `objects/info/alternates`, which is read-only.
//! - **Write.** Nothing is written to either repository: the stat refresh a status computes is
//!   dropped instead of being written back to the index (nothing here could write it), no lock file
//!   is taken, and submodules are neither opened nor inspected (`.gitmodules` isn't even read; a
//!   changed submodule commit still counts, as a staged gitlink).
//!
//! Counting choices: untracked files are counted one by one (a wholly untracked directory counts
//! its files; a nested repository counts as 1); ignored entries are collapsed, so a wholly ignored
//! directory like `target/` counts as 1. Rename tracking is off, so a staged rename counts as two
//! modified paths. A conflicted path counts in `conflicted` only, not in `modified`. Ignore rules
//! come from the `.gitignore` files and `.git/info/exclude`; the job's `core.excludesFile` is
//! untrusted configuration and not used, so files only it would hide count as untracked.
//!
//! Residual risk the caller should know: like git itself, gix blocks if a file it reads (a loose
//! ref, the index) was replaced by a FIFO. The few files read here directly, and those of the git
//! directory gix reads whole (`HEAD`, `config`, `index`, `packed-refs`, `info/exclude`,
//! `info/attributes`, `objects/info/alternates`, ...), are checked to be regular files of a bounded
//! size (a link to `/dev/zero` or a sparse file of gigabytes would be read into memory); a caller
//! that cannot tolerate a hang should still bound the call in time. Memory is not bounded
//! otherwise: a tree nested a hundred thousand levels deep costs gix's status gigabytes.
//!
//! The parts: the error (error.rs), the inspection and its read of refs (inspection.rs), the
//! layout checked before anything is opened (layout.rs), the one safe way to open (open.rs), the
//! status (status.rs: stat data the job could have forged distrusted by forged.rs, the in-memory
//! stat refresh of refresh.rs, counted by tally.rs, HEAD's tree unread when the index hashes to
//! it: written_tree.rs), the bounds on what it reads of the job's objects (bounds.rs), the
//! repositories among the ignored files (ignored.rs), those no walk enters (unwalked.rs) and those
//! the index holds as gitlinks (nested.rs, whose commits published.rs judges; the files beneath
//! a gitlink that no repository holds: loose.rs), the state files read directly (state.rs), and
//! the project's objects asked about (missing.rs).

mod bounds;
mod error;
mod forged;
mod ignored;
mod inspection;
mod layout;
mod linked;
mod linked_status;
mod loose;
mod missing;
mod nested;
mod open;
mod patterns;
mod published;
mod reflog;
mod refresh;
mod settled;
mod state;
mod status;
mod tally;
mod unwalked;
mod written_tree;

pub use error::InspectError;
pub use forged::CheckedOut;
pub use inspection::{branch_tip, inspect, Inspection};
pub use missing::missing_from;
pub use patterns::ProjectExcludes;
pub use reflog::reflog_only;

#[cfg(test)]
mod tests;
