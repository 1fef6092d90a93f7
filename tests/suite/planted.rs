//! Code a job plants in its own repository (filter drivers, fsmonitor, hooks) is never executed by
//! isolate when it inspects, imports and removes the worktree. The markers live outside the
//! sandbox's writable paths, so only isolate itself could create them.

use std::fs;
use std::path::Path;

use crate::support::*;

fn plant(markers: &Path) -> String {
    let m = markers.display();
    format!(
        "git config filter.evil.clean 'touch {m}/filter-clean; cat'; \
         git config filter.evil.smudge 'touch {m}/filter-smudge; cat'; \
         git config filter.evil.process 'touch {m}/filter-process'; \
         git config filter.evil.required true; \
         echo '* filter=evil' > .gitattributes; mkdir -p .git/info; echo '* filter=evil' > .git/info/attributes; \
         git config core.fsmonitor 'touch {m}/fsmonitor; echo'; \
         git config core.hooksPath .git/evil-hooks; mkdir -p .git/evil-hooks .git/hooks; \
         for h in pre-commit post-checkout post-merge reference-transaction pre-auto-gc post-index-change; do \
           printf '#!/bin/sh\\ntouch {m}/hook-%s\\n' $h > .git/evil-hooks/$h; cp .git/evil-hooks/$h .git/hooks/$h; \
           chmod +x .git/evil-hooks/$h .git/hooks/$h; done; \
         git config core.worktree {m}; git config core.sshCommand 'touch {m}/ssh'; \
         git config diff.external 'touch {m}/diff'; "
    )
}

fn assert_no_marker(markers: &Path) {
    let made: Vec<_> = fs::read_dir(markers)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(made.is_empty(), "planted code ran: {made:?}");
}

#[test]
fn planted_filters_fsmonitor_and_hooks_do_not_run_when_the_worktree_is_kept() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let markers = env.path().join("markers");
    fs::create_dir_all(&markers).unwrap();
    // A tracked file changed without changing its size, with an old mtime: only its content can
    // tell, so a status that ran clean filters would run the planted one here.
    let script = format!(
        "{} printf 'HELLO\\n' > README; touch -d '2001-01-01' README",
        plant(&markers)
    );
    let (out, value) = env.worktree_job(&repo, &[], &script);
    assert_status(&out, 0);
    assert_eq!(value["worktree"]["removed"], false);
    assert_eq!(value["worktree"]["dirty"]["modified"], 1, "{value}");
    assert_no_marker(&markers);
}

#[test]
fn planted_filters_fsmonitor_and_hooks_do_not_run_when_the_worktree_is_removed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let markers = env.path().join("markers");
    fs::create_dir_all(&markers).unwrap();
    // Commit everything (so the tree is clean and isolate imports and removes it), with the planted
    // config in place afterwards.
    let script = format!(
        "echo work > work.txt && git add work.txt && git commit -q -m work --no-verify; {} true",
        plant(&markers)
    );
    let (out, value) = env.worktree_job(&repo, &[], &script);
    assert_status(&out, 0);
    assert_no_marker(&markers);
    // .gitattributes is new and untracked: the worktree holds work, so it is kept, and the
    // commit was imported all the same.
    assert_eq!(value["worktree"]["commits"], 1, "{value}");
    env.assert_fsck(&repo);
}
