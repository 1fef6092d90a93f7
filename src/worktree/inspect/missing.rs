//! Which commits the user's project lacks, asked of its object store opened as isolated as a job's.
//! Never writes to the project.

use std::path::Path;

use super::error::InspectError;
use super::open::open_project;

/// Of `ids` (40-hex commit ids), those that the repository whose git dir (common dir) is `project_git_dir` does NOT have in its object database (this repository is the user's own; open it isolated too, read-only).
pub fn missing_from(project_git_dir: &Path, ids: &[String]) -> Result<Vec<String>, InspectError> {
    let repo = open_project(project_git_dir)?;
    let mut missing = Vec::new();
    for id in ids {
        let oid =
            gix::ObjectId::from_hex(id.as_bytes()).map_err(|err| InspectError::InvalidId {
                id: id.clone(),
                reason: err.to_string(),
            })?;
        if !repo.has_object(oid) {
            missing.push(id.clone());
        }
    }
    Ok(missing)
}
