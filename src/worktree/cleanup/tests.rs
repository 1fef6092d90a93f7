//! The words every ending prints, read off the typed ending, fate and reasons: the record's
//! `reason` and flags must stay what they were when they were concatenated strings.

use super::*;

#[test]
fn a_kept_worktree_says_kept_and_why() {
    let ending = Ending::Kept(Stay::Verdict(Keep::Asked));
    assert_eq!(ending.to_string(), "kept: --keep");
    assert!(!ending.removed());
    let unremovable = Ending::Kept(Stay::Unremovable("Permission denied".into()));
    assert_eq!(
        unremovable.to_string(),
        "kept: cannot remove the worktree: Permission denied"
    );
    let work = Work {
        modified: 3,
        stash_entries: 1,
        ..Work::default()
    };
    assert_eq!(
        Ending::Kept(Stay::Verdict(Keep::Work(work))).to_string(),
        "kept: 3 modified, 1 stash entry"
    );
}

#[test]
fn a_gone_worktree_says_how_and_what_became_of_its_branch() {
    let gone = |tree, fate| Ending::Gone { tree, fate };
    assert_eq!(gone(Gone::Clean, Fate::NoBranch).to_string(), "clean");
    assert_eq!(
        gone(Gone::Clean, Fate::Deleted(Deleted::NoCommits)).to_string(),
        "clean; branch deleted: no commits"
    );
    assert_eq!(
        gone(Gone::Removed, Fate::Deleted(Deleted::Landed("main".into()))).to_string(),
        "worktree removed; branch deleted: its commits are in main"
    );
    assert_eq!(
        gone(
            Gone::Missing,
            Fate::Kept(BranchKept::Unmerged {
                count: 1,
                target: "main".into()
            })
        )
        .to_string(),
        "worktree directory is missing; branch kept: 1 commit not in main"
    );
    assert_eq!(
        gone(Gone::Clean, Fate::Kept(BranchKept::BeyondBase(2))).to_string(),
        "clean; branch kept: 2 commits beyond base"
    );
    assert!(gone(Gone::Missing, Fate::NoBranch).removed());
}

#[test]
fn the_fate_says_what_happens_to_the_branch() {
    assert_eq!(Fate::NoBranch.action(), None);
    assert_eq!(
        Fate::Deleted(Deleted::NoCommits).action(),
        Some(BranchAction::Delete)
    );
    assert_eq!(
        Fate::Kept(BranchKept::JustImported).action(),
        Some(BranchAction::Keep)
    );
    assert_eq!(
        Fate::Kept(BranchKept::JustImported).to_string(),
        "branch kept: its commits were imported just now"
    );
}

#[test]
fn a_mismatch_says_what_differs() {
    let keep = Keep::Mismatch(Mismatch::Pin {
        pin: "refs/isolate/x/base".into(),
        found: None,
        base: "abc".into(),
    });
    assert_eq!(
        keep.to_string(),
        "record does not match the disk: the project's refs/isolate/x/base is missing, not the \
         record's base abc; nothing deleted"
    );
}
