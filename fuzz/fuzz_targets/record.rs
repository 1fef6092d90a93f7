//! Job records (`jobs/<id>/job.json`), which a user or a sandboxed process with a way around the
//! sandbox could edit: parsing any text never panics, a parsed record survives a round trip, and the
//! worktree path the cleanup would delete is never taken from the record: `cleanup::validate`
//! accepts a record only when its id is one isolate makes and its path is exactly
//! `<key dir>/<id>`, one component below the project's worktree directory.

#![no_main]

use std::path::{Component, Path, PathBuf};

use isolate::job::id::JobId;
use isolate::job::record::Record;
use isolate::git::project::Project;
use isolate::worktree::cleanup::{self, Branch, Facts, Life, Settling, Tree};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(record) = serde_json::from_str::<Record>(text) else {
        return;
    };
    let again = serde_json::to_string(&record).expect("a record serializes");
    let back: Record = serde_json::from_str(&again).expect("a record parses back");
    assert_eq!(back, record);
    let _ = record.exit_status();

    let id = JobId::parse(&record.id);
    if let Some(id) = &id {
        assert_eq!(id.as_str(), record.id);
        let components: Vec<Component> = Path::new(id.as_str()).components().collect();
        assert!(matches!(components.as_slice(), [Component::Normal(_)]));
    }
    let Some(wt) = &record.worktree else { return };

    // The project's directory of worktrees, computed from the project the record names (as
    // settle_recorded does), never from the record's path.
    let project = Project {
        top: PathBuf::from(&wt.repo),
        git_dir: PathBuf::from("/nonexistent/.git"),
        objects: PathBuf::from("/nonexistent/.git/objects"),
        hooks: PathBuf::from("/nonexistent/.git/hooks"),
        object_format: "sha1".into(),
        caller_top: PathBuf::from(&wt.repo),
        prefix: PathBuf::new(),
    };
    let key = project.key();
    let key_components: Vec<Component> = Path::new(&key).components().collect();
    assert!(
        matches!(key_components.as_slice(), [Component::Normal(_)]),
        "project key {key:?} from {:?}",
        wt.repo
    );
    let key_dir = Path::new("/nonexistent-state/worktrees").join(&key);
    let Some(id) = id else { return };
    let path = Path::new(&wt.path);
    // The most a record can make true: the base pin agrees and the directory is gone, so that
    // validate's only checks are the record's own claims.
    let facts = Facts {
        life: Life::Ended,
        in_use: false,
        tree: Tree::Missing,
        branch: Branch::Unknown("fuzz".into()),
        copied: false,
        pin: Some(wt.base.clone()),
        branch_after: None,
        unimported: Vec::new(),
        branch_held: None,
        settling: Settling::Rm,
    };
    let job_dir = Path::new("/nonexistent-state/jobs").join(id.as_str());
    let job = cleanup::Job {
        project: &project,
        id: &id,
        key_dir: &key_dir,
        path,
        base: &wt.base,
        job_dir: &job_dir,
        life: Life::Ended,
        removed: false,
        settling: Settling::Rm,
        dispatch_dirty: wt.dispatch_dirty,
        project_branch: None,
        policy: None,
    };
    if cleanup::validate(&job, &facts).is_ok() {
        assert_eq!(path, key_dir.join(id.as_str()), "validate trusted {path:?}");
        assert_eq!(path.parent(), Some(key_dir.as_path()));
        assert!(path
            .components()
            .all(|c| !matches!(c, Component::ParentDir | Component::CurDir)));
    }
});
