//! `isolate worktrees [--json]`: every managed worktree (those with a record, and those `rm --force`
//! left on disk) with its marks, and what `prune` would do with it.

use crate::cli::WorktreesArgs;
use crate::command::print_json;
use crate::error::Result;
use crate::job::{project, store};
use crate::worktree::cleanup::Projects;
use crate::worktree::marks::{self, Row};

pub fn run(args: WorktreesArgs) -> Result<i32> {
    let state = store::state_dir()?;
    let scope = project::scope(&state, args.all_projects)?;
    let mut projects = Projects::default();
    let rows: Vec<Row> = store::list_all(&state)
        .iter()
        .filter(|(_, record)| project::within(record, scope.as_deref()))
        .filter_map(|(_, record)| marks::row(&state, record, &mut projects))
        .collect();
    if args.json {
        return print_json(&rows);
    }
    out!("{:<28} {:<10} {:<40} PATH", "JOB", "USED", "MARKS")?;
    for row in &rows {
        let mut marks = row
            .marks
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(e) = &row.error {
            // An error can carry what the job's repository holds: shown, never obeyed.
            let e = crate::controls::name(&e.to_string());
            marks = format!("{marks} (error: {e})").trim_start().to_string();
        }
        let used = row.used.as_deref().map(marks::ago).unwrap_or_default();
        out!("{:<28} {:<10} {:<40} {}", row.id, used, marks, row.path)?;
    }
    Ok(0)
}
