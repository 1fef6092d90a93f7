// TEMPORARY STUB: replaced by the real module (helper-1).
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error("stub")]
    Stub,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inspection {
    pub head_branch: Option<String>,
    pub head_commit: Option<String>,
    pub branch_tip: Option<String>,
    pub modified: usize,
    pub untracked: usize,
    pub conflicted: usize,
    pub ignored: usize,
    pub in_progress: Vec<&'static str>,
    pub stash_entries: usize,
    pub other_refs: Vec<(String, String)>,
}

pub fn inspect(_worktree: &Path, _branch: &str) -> Result<Inspection, InspectError> {
    Err(InspectError::Stub)
}

pub fn missing_from(_project_git_dir: &Path, _ids: &[String]) -> Result<Vec<String>, InspectError> {
    Err(InspectError::Stub)
}
