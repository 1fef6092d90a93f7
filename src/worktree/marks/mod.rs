//! The marks of a managed worktree (`isolate worktrees`): running, lost, forgotten, missing,
//! dirty, other refs, an operation in progress, ahead, behind, no commits, merged (also after a
//! squash or rebase merge, standing.rs), to import, and when it was last used; and what `prune`
//! would do with it. Marks and that prediction are read off the cleanup decision's own facts and
//! verdict (`cleanup::survey`), so `worktrees`, `prune --dry-run` and `prune` cannot disagree.
//!
//! The mark is mark.rs, the row row.rs, the marks read off the facts fill.rs, "2d ago" ago.rs.

mod ago;
mod fill;
mod mark;
mod row;

pub use ago::ago;
pub use mark::Mark;
pub use row::{row, Prune, Row};
