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

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use gix::bstr::{BString, ByteSlice};

#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// `<worktree>/.git` is missing, not a real directory, or laid out unlike isolate's job repositories.
    #[error("cannot inspect {path}: {reason}")]
    NotARepository { path: PathBuf, reason: String },
    /// gix failed to open or read the repository.
    #[error("cannot inspect {path}: {what}: {source}")]
    Git {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: gix::Error,
    },
    /// A file that had to be read directly could not be.
    #[error("cannot inspect {path}: {what}: {source}")]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// An id passed to [`missing_from`] is not a full hexadecimal object id.
    #[error("invalid object id {id:?}: {reason}")]
    InvalidId { id: String, reason: String },
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inspection {
    /// Branch HEAD points at (e.g. "isolate/fix-3fa2"), None when detached or unborn.
    /// A symbolic HEAD to a ref outside `refs/heads/` is given by its full name.
    pub head_branch: Option<String>,
    /// Commit HEAD resolves to (40-hex), None when unborn.
    pub head_commit: Option<String>,
    /// Tip of `refs/heads/<branch>` for the `branch` argument, None if that ref is missing.
    pub branch_tip: Option<String>,
    /// Tracked files that differ: staged (index vs HEAD tree) or modified/deleted in the work tree
    /// (vs index), including intent-to-add entries. A file both staged and modified counts once;
    /// conflicted paths are not counted here.
    pub modified: usize,
    /// Untracked files that are not ignored. Each file counts, also inside a wholly untracked
    /// directory; a nested repository counts as 1. Empty directories do not count.
    pub untracked: usize,
    /// Index entries with unresolved conflicts (count paths once).
    pub conflicted: usize,
    /// Ignored entries, a fully ignored directory counting as 1; informational only.
    pub ignored: usize,
    /// Operations in progress, named "merge", "rebase", "cherry-pick", "revert", "bisect" (from
    /// MERGE_HEAD, rebase-merge/, rebase-apply/, CHERRY_PICK_HEAD, REVERT_HEAD, BISECT_LOG in the git dir).
    pub in_progress: Vec<&'static str>,
    /// Number of stash entries (reflog lines of refs/stash; 1 if the ref exists without a reflog).
    pub stash_entries: usize,
    /// Every other ref under refs/heads/ and refs/tags/ (full ref name, peeled object id as 40-hex,
    /// normally a commit), excluding refs/heads/<branch>. Sorted by name. A ref whose object is
    /// missing keeps its unpeeled id; a dangling symbolic ref is left out.
    pub other_refs: Vec<(String, String)>,
}

/// Inspect the repository whose work tree is `worktree` (git dir `worktree/.git`). `branch` is the short branch name isolate created ("isolate/<id>").
pub fn inspect(worktree: &Path, branch: &str) -> Result<Inspection, InspectError> {
    let git_dir = worktree.join(".git");
    check_layout(&git_dir)?;
    let repo = open_untrusted(worktree, &git_dir)?;
    let git = |what: &'static str| {
        let path = worktree.to_owned();
        move |source: gix::Error| InspectError::Git { path, what, source }
    };

    let mut out = Inspection::default();

    let head = repo.head().map_err(git("cannot read HEAD"))?;
    if let gix::head::Kind::Symbolic(referent) = &head.kind {
        let name = referent.name.as_bstr();
        let short = name.strip_prefix(b"refs/heads/").unwrap_or(name);
        out.head_branch = Some(short.to_str_lossy().into_owned());
    }
    let unpeeled = head.id().map(|id| id.detach());
    out.head_commit = match head.try_into_peeled_id() {
        Ok(id) => id.map(|id| id.detach()),
        // The object is missing or unreadable: still report where HEAD points.
        Err(_) => unpeeled,
    }
    .map(|id| id.to_string());

    let branch_ref = format!("refs/heads/{branch}");
    out.branch_tip = match repo
        .try_find_reference(branch_ref.as_str())
        .map_err(git("cannot read the job branch"))?
    {
        Some(mut reference) => target_hex(&mut reference),
        None => None,
    };

    let platform = repo.references().map_err(git("cannot list references"))?;
    for iter in [
        platform
            .local_branches()
            .map_err(git("cannot list branches"))?,
        platform.tags().map_err(git("cannot list tags"))?,
    ] {
        for reference in iter {
            let mut reference = reference.map_err(|source| InspectError::Git {
                path: worktree.to_owned(),
                what: "cannot read a reference",
                source: gix::Error::from_error(source),
            })?;
            let name = reference.name().as_bstr().to_str_lossy().into_owned();
            if name == branch_ref {
                continue;
            }
            if let Some(id) = target_hex(&mut reference) {
                out.other_refs.push((name, id));
            }
        }
    }
    out.other_refs.sort();
    out.other_refs.dedup();

    out.stash_entries = match repo
        .try_find_reference("refs/stash")
        .map_err(git("cannot read refs/stash"))?
    {
        Some(_) => count_lines(&git_dir.join("logs/refs/stash"))?.max(1),
        None => 0,
    };

    out.in_progress = in_progress(&git_dir);

    count_status(&repo, &mut out).map_err(git("cannot compute the status"))?;
    Ok(out)
}

/// Of `ids` (40-hex commit ids), those that the repository whose git dir (common dir) is `project_git_dir` does NOT have in its object database (this repository is the user's own; open it isolated too, read-only).
pub fn missing_from(project_git_dir: &Path, ids: &[String]) -> Result<Vec<String>, InspectError> {
    let repo =
        gix::open_opts(project_git_dir, open_options()).map_err(|source| InspectError::Git {
            path: project_git_dir.to_owned(),
            what: "cannot open the project repository",
            source,
        })?;
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

/// The open options for any repository inspected here: only the repository's own config file,
/// no environment, no includes, and every repository-local section untrusted for the keys gix
/// guards with the section filter. Replace refs are switched off by an API override, which the
/// filter lets through as it is not repository-local.
fn open_options() -> gix::open::Options {
    gix::open::Options::isolated()
        .open_path_as_is(true)
        .filter_config_section(not_repository_local)
        .config_overrides(["core.useReplaceRefs=false"])
}

fn not_repository_local(meta: &gix::config::file::Metadata) -> bool {
    meta.source.kind() != gix::config::source::Kind::Repository
}

/// `git_dir` must be a real directory and not a linked worktree's; the files gix reads whole must
/// be regular files of a bounded size if present (`READ_FIRST`).
fn check_layout(git_dir: &Path) -> Result<(), InspectError> {
    let not_repo = |reason: String| InspectError::NotARepository {
        path: git_dir.to_owned(),
        reason,
    };
    let meta = std::fs::symlink_metadata(git_dir)
        .map_err(|err| not_repo(format!("cannot stat it: {err}")))?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err(not_repo(
            "it is a symlink, not the job's own git directory".into(),
        ));
    }
    if !kind.is_dir() {
        return Err(not_repo(
            "it is not a directory (a gitfile would redirect to another git directory)".into(),
        ));
    }
    if std::fs::symlink_metadata(git_dir.join("commondir")).is_ok() {
        return Err(not_repo(
            "it has a commondir file, so it is not a job repository".into(),
        ));
    }
    for (name, limit) in READ_FIRST {
        if let Ok(meta) = std::fs::symlink_metadata(git_dir.join(name)) {
            if !meta.file_type().is_file() {
                return Err(not_repo(format!("{name} is not a regular file")));
            }
            if meta.len() > limit {
                return Err(not_repo(format!(
                    "{name} is {} bytes, more than a job repository's ever is ({limit})",
                    meta.len()
                )));
            }
        }
    }
    Ok(())
}

/// The files of the git directory gix reads whole, and the most each may hold: a symlink there
/// could point at a FIFO (the read blocks) or `/dev/zero` (it never ends), and a sparse file of
/// gigabytes is read into memory all the same.
const READ_FIRST: [(&str, u64); 9] = [
    ("HEAD", 4 << 10),
    ("config", 4 << 20),
    ("index", 1 << 30),
    ("packed-refs", 1 << 30),
    ("info/exclude", 4 << 20),
    ("info/attributes", 4 << 20),
    ("info/grafts", 4 << 20),
    ("shallow", 64 << 20),
    ("objects/info/alternates", 64 << 10),
];

/// Open the job repository at `git_dir` with `worktree` as its work tree, safe to compute a status on.
fn open_untrusted(worktree: &Path, git_dir: &Path) -> Result<gix::Repository, InspectError> {
    let git = |what: &'static str| {
        let path = worktree.to_owned();
        move |source: gix::Error| InspectError::Git { path, what, source }
    };
    let mut repo =
        gix::open_opts(git_dir, open_options()).map_err(git("cannot open the repository"))?;
    // Whatever core.worktree / core.bare claim (the section filter already hides core.worktree).
    repo.set_workdir(worktree.to_owned())
        .map_err(git("cannot use the work tree"))?;
    drop_driver_sections(&mut repo).map_err(git("cannot sanitize the configuration"))?;
    // Speeds up turning HEAD^{tree} into an index for the tree-index comparison.
    repo.object_cache_size_if_unset(4 * 1024 * 1024);
    Ok(repo)
}

/// Remove every `filter` and `diff` section (whatever its case) from the configuration the
/// repository uses from now on, so no clean/smudge/process filter or textconv/external diff
/// driver is even known. In memory only: the config file is untouched.
fn drop_driver_sections(repo: &mut gix::Repository) -> Result<(), gix::Error> {
    let mut config = repo.config_snapshot_mut();
    let doomed: Vec<_> = config
        .sections_and_ids()
        .filter(|(section, _)| {
            let name = section.header().name();
            name.eq_ignore_ascii_case(b"filter") || name.eq_ignore_ascii_case(b"diff")
        })
        .map(|(_, id)| id)
        .collect();
    for id in doomed {
        config.remove_section_by_id(id);
    }
    config.commit()?;
    Ok(())
}

/// Compute the status of `repo` into the counters of `out`, writing nothing back.
///
/// This is gix's `status()` taken apart, for control: HEAD^{tree} against the index on one
/// thread, the index against the work tree (a parallel stat check, hashing only files whose stat
/// data changed, plus the directory walk) on this one. Unlike `status()`, it never reads
/// `.gitmodules` (a malformed one would fail the whole status) and has nowhere to write the
/// refreshed stat data to.
fn count_status(repo: &gix::Repository, out: &mut Inspection) -> Result<(), gix::Error> {
    use gix::dir::walk::EmissionMode;

    let index = repo.index_or_empty()?;
    let index: &gix::index::State = &index;
    let head_tree = repo.head_tree_id_or_empty()?.detach();
    let options = gix::status::index_worktree::Options {
        sorting: None,
        dirwalk_options: Some(
            repo.dirwalk_options()?
                .emit_untracked(EmissionMode::Matching)
                .emit_ignored(Some(EmissionMode::CollapseDirectory))
                .emit_empty_directories(false)
                .recurse_repositories(false),
        ),
        rewrites: None,
        thread_limit: None,
    };

    let tree_repo = repo.clone();
    let (staged, tally) = std::thread::scope(|scope| {
        let staged = scope.spawn(move || {
            let mut staged = HashSet::<BString>::new();
            tree_repo
                .tree_index_status(
                    &head_tree,
                    index,
                    None,
                    gix::status::tree_index::TrackRenames::Disabled,
                    |change, _, _| {
                        staged.insert(change.location().to_owned());
                        Ok(std::ops::ControlFlow::Continue(()))
                    },
                )
                .map(|_| staged)
        });
        let mut tally = Tally::default();
        let worktree = repo.index_worktree_status(
            index,
            Vec::<BString>::new(),
            &mut tally,
            gix::status::plumbing::index_as_worktree::traits::FastEq,
            NoSubmodules,
            &mut gix::progress::Discard,
            &std::sync::atomic::AtomicBool::new(false),
            options,
        );
        let staged = staged
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (staged, worktree.map(|_| tally))
    });
    let (staged, tally) = (staged?, tally?);

    let mut modified = tally.modified;
    modified.extend(staged);
    out.conflicted = tally.conflicted.len();
    out.modified = modified.difference(&tally.conflicted).count();
    out.untracked = tally.untracked;
    out.ignored = tally.ignored;
    Ok(())
}

/// What the index-to-work-tree comparison found.
#[derive(Default)]
struct Tally {
    modified: HashSet<BString>,
    conflicted: HashSet<BString>,
    untracked: usize,
    ignored: usize,
}

impl<'index> gix::status::plumbing::index_as_worktree_with_renames::VisitEntry<'index> for Tally {
    type ContentChange = ();
    type SubmoduleStatus = ();

    fn visit_entry(
        &mut self,
        entry: gix::status::plumbing::index_as_worktree_with_renames::Entry<'index, (), ()>,
    ) {
        use gix::dir::entry::Status as Dir;
        use gix::status::plumbing::index_as_worktree::EntryStatus;
        use gix::status::plumbing::index_as_worktree_with_renames::Entry;
        match entry {
            Entry::Modification {
                rela_path, status, ..
            } => match status {
                EntryStatus::Conflict { .. } => {
                    self.conflicted.insert(rela_path.to_owned());
                }
                // Same content, stale stat data: git would refresh the index here; we don't.
                EntryStatus::NeedsUpdate(_) => {}
                EntryStatus::Change(_) | EntryStatus::IntentToAdd => {
                    self.modified.insert(rela_path.to_owned());
                }
            },
            Entry::DirectoryContents { entry, .. } => match entry.status {
                Dir::Untracked => self.untracked += 1,
                Dir::Ignored(_) => self.ignored += 1,
                Dir::Tracked | Dir::Pruned => {}
            },
            // Rename tracking is off; should one be reported anyway, a tracked path is gone and
            // an untracked one appeared.
            Entry::Rewrite { source, .. } => {
                self.modified.insert(source.rela_path().to_owned());
                self.untracked += 1;
            }
        }
    }
}

/// Submodules are never looked into: opening one would read its configuration, which is as
/// untrusted as the job's. A changed submodule commit still shows as a staged gitlink.
#[derive(Clone)]
struct NoSubmodules;

impl gix::status::plumbing::index_as_worktree::traits::SubmoduleStatus for NoSubmodules {
    type Output = ();

    fn status(
        &mut self,
        _entry: &gix::index::Entry,
        _rela_path: &gix::bstr::BStr,
    ) -> gix::Result<Option<()>> {
        Ok(None)
    }
}

/// The peeled id `reference` points at as hex; its direct target if the object can't be read;
/// None for a dangling symbolic ref.
fn target_hex(reference: &mut gix::Reference<'_>) -> Option<String> {
    let direct = reference.target().try_id().map(|id| id.to_owned());
    match reference.peel_to_id() {
        Ok(id) => Some(id.detach().to_string()),
        Err(_) => direct.map(|id| id.to_string()),
    }
}

fn in_progress(git_dir: &Path) -> Vec<&'static str> {
    let exists = |name: &str| std::fs::symlink_metadata(git_dir.join(name)).is_ok();
    let mut ops = Vec::new();
    if exists("MERGE_HEAD") {
        ops.push("merge");
    }
    if exists("rebase-merge") || exists("rebase-apply") {
        ops.push("rebase");
    }
    if exists("CHERRY_PICK_HEAD") {
        ops.push("cherry-pick");
    }
    if exists("REVERT_HEAD") {
        ops.push("revert");
    }
    if exists("BISECT_LOG") {
        ops.push("bisect");
    }
    ops
}

/// Count the non-empty lines of the reflog at `path` (0 if it doesn't exist). Only a regular file
/// is read, and at most 64 MiB of it (about 400,000 entries), so a planted FIFO or device can't
/// block or exhaust the inspection.
fn count_lines(path: &Path) -> Result<usize, InspectError> {
    const LIMIT: u64 = 64 << 20;
    let io = |what: &'static str| {
        let path = path.to_owned();
        move |source: std::io::Error| InspectError::Io { path, what, source }
    };
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => {}
        Ok(_) => return Ok(0),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(err) => return Err(io("cannot stat the stash reflog")(err)),
    }
    let mut content = Vec::new();
    std::fs::File::open(path)
        .map_err(io("cannot open the stash reflog"))?
        .take(LIMIT)
        .read_to_end(&mut content)
        .map_err(io("cannot read the stash reflog"))?;
    Ok(content
        .lines()
        .filter(|line| !line.trim().is_empty())
        .count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    const BRANCH: &str = "isolate/x-1234";

    /// Run `git` in `dir` isolated from the developer's configuration; return its trimmed stdout.
    fn git(dir: &Path, args: &[&str]) -> String {
        let out = git_cmd(dir, args).output().expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    fn git_cmd(dir: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(dir).args(args);
        for var in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_CEILING_DIRECTORIES",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.com")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.com")
            .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z");
        cmd
    }

    fn write(path: &Path, content: &str) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, content).unwrap();
    }

    struct Fixture {
        _tmp: tempfile::TempDir,
        project: PathBuf,
        wt: PathBuf,
        base: String,
    }

    /// A project with three commits (and `target/` ignored), and a job repository cut from it
    /// the way isolate does: a shared clone through `objects/info/alternates`.
    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        std::fs::create_dir(&project).unwrap();
        git(&project, &["init", "-q", "-b", "main"]);
        write(&project.join("a.txt"), "alpha\n");
        write(&project.join(".gitignore"), "target/\n");
        git(&project, &["add", "."]);
        git(&project, &["commit", "-q", "-m", "one"]);
        write(&project.join("src/lib.rs"), "pub fn f() {}\n");
        git(&project, &["add", "."]);
        git(&project, &["commit", "-q", "-m", "two"]);
        write(&project.join("b.txt"), "bravo\n");
        git(&project, &["add", "."]);
        git(&project, &["commit", "-q", "-m", "three"]);
        let base = git(&project, &["rev-parse", "HEAD"]);

        let wt = tmp.path().join("wt");
        git(
            tmp.path(),
            &["init", "-q", "--template=", wt.to_str().unwrap()],
        );
        let objects = project.join(".git/objects");
        write(
            &wt.join(".git/objects/info/alternates"),
            &format!("{}\n", objects.to_str().unwrap()),
        );
        let branch_ref = format!("refs/heads/{BRANCH}");
        git(&wt, &["update-ref", &branch_ref, &base]);
        git(&wt, &["symbolic-ref", "HEAD", &branch_ref]);
        git(&wt, &["reset", "-q", "--hard"]);
        Fixture {
            _tmp: tmp,
            project,
            wt,
            base,
        }
    }

    #[test]
    fn clean_job_reports_nothing() {
        let f = fixture();
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!(
            got,
            Inspection {
                head_branch: Some(BRANCH.into()),
                head_commit: Some(f.base.clone()),
                branch_tip: Some(f.base.clone()),
                ..Inspection::default()
            }
        );
        assert!(
            missing_from(&f.project.join(".git"), std::slice::from_ref(&f.base))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn modified_and_deleted_files_count() {
        let f = fixture();
        write(&f.wt.join("a.txt"), "alpha changed\n");
        std::fs::remove_file(f.wt.join("b.txt")).unwrap();
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!((got.modified, got.untracked, got.conflicted), (2, 0, 0));
    }

    #[test]
    fn staged_and_modified_file_counts_once() {
        let f = fixture();
        write(&f.wt.join("a.txt"), "alpha staged\n");
        git(&f.wt, &["add", "a.txt"]);
        write(&f.wt.join("a.txt"), "alpha staged then modified\n");
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!(got.modified, 1);
    }

    #[test]
    fn staged_new_file_counts_as_modified() {
        let f = fixture();
        write(&f.wt.join("new.txt"), "new\n");
        git(&f.wt, &["add", "new.txt"]);
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!((got.modified, got.untracked), (1, 0));
    }

    #[test]
    fn untracked_files_count_one_by_one() {
        let f = fixture();
        write(&f.wt.join("notes.md"), "notes\n");
        write(&f.wt.join("newdir/one.rs"), "1\n");
        write(&f.wt.join("newdir/deeper/two.rs"), "2\n");
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!((got.modified, got.untracked, got.ignored), (0, 3, 0));
    }

    #[test]
    fn ignored_files_are_not_untracked() {
        let f = fixture();
        write(&f.wt.join("target/debug/app"), "binary\n");
        write(&f.wt.join("target/debug/app.d"), "deps\n");
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!((got.modified, got.untracked), (0, 0));
        assert!(got.ignored > 0, "{got:?}");
    }

    #[test]
    fn merge_conflict_is_reported() {
        let f = fixture();
        git(&f.wt, &["checkout", "-q", "-b", "other"]);
        write(&f.wt.join("a.txt"), "alpha from other\n");
        git(&f.wt, &["commit", "-q", "-am", "other"]);
        git(&f.wt, &["checkout", "-q", BRANCH]);
        write(&f.wt.join("a.txt"), "alpha from job\n");
        git(&f.wt, &["commit", "-q", "-am", "job"]);
        let merge = git_cmd(&f.wt, &["merge", "-q", "other"]).output().unwrap();
        assert!(!merge.status.success(), "the merge must conflict");
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!(got.conflicted, 1, "{got:?}");
        assert_eq!(got.modified, 0, "{got:?}");
        assert!(got.in_progress.contains(&"merge"), "{got:?}");
    }

    #[test]
    fn stash_entries_are_counted() {
        let f = fixture();
        write(&f.wt.join("a.txt"), "alpha stashed\n");
        git(&f.wt, &["stash", "-q"]);
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!((got.stash_entries, got.modified), (1, 0));
        write(&f.wt.join("b.txt"), "bravo stashed\n");
        git(&f.wt, &["stash", "-q"]);
        assert_eq!(inspect(&f.wt, BRANCH).unwrap().stash_entries, 2);
    }

    #[test]
    fn other_branches_and_tags_are_listed_and_new_commits_missing_from_project() {
        let f = fixture();
        git(&f.wt, &["checkout", "-q", "-b", "side"]);
        write(&f.wt.join("side.txt"), "side\n");
        git(&f.wt, &["add", "side.txt"]);
        git(&f.wt, &["commit", "-q", "-m", "side work"]);
        let side = git(&f.wt, &["rev-parse", "HEAD"]);
        git(&f.wt, &["tag", "-a", "-m", "annotated", "v1", &side]);
        git(&f.wt, &["checkout", "-q", BRANCH]);

        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!(got.head_branch.as_deref(), Some(BRANCH));
        assert_eq!(got.branch_tip.as_deref(), Some(f.base.as_str()));
        assert_eq!(
            got.other_refs,
            vec![
                ("refs/heads/side".to_owned(), side.clone()),
                ("refs/tags/v1".to_owned(), side.clone()),
            ],
            "tags are peeled to their commit"
        );
        let missing =
            missing_from(&f.project.join(".git"), &[f.base.clone(), side.clone()]).unwrap();
        assert_eq!(missing, vec![side]);
    }

    #[test]
    fn detached_head_has_no_branch() {
        let f = fixture();
        git(&f.wt, &["checkout", "-q", "--detach", "HEAD~1"]);
        let parent = git(&f.wt, &["rev-parse", "HEAD"]);
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!(got.head_branch, None);
        assert_eq!(got.head_commit, Some(parent));
        assert_eq!(got.branch_tip, Some(f.base.clone()));
        assert_eq!((got.modified, got.untracked), (0, 0), "{got:?}");
    }

    #[test]
    fn missing_branch_and_unborn_head() {
        let f = fixture();
        git(&f.wt, &["symbolic-ref", "HEAD", "refs/heads/never-born"]);
        let got = inspect(&f.wt, "isolate/other-0000").unwrap();
        assert_eq!(
            (got.head_branch, got.head_commit, got.branch_tip),
            (None, None, None)
        );
        assert_eq!(
            got.other_refs,
            vec![(format!("refs/heads/{BRANCH}"), f.base.clone())]
        );
        // Against an empty HEAD tree everything in the index is staged.
        assert_eq!(got.modified, 4, "a.txt, b.txt, .gitignore, src/lib.rs");
    }

    #[test]
    fn invalid_ids_are_rejected() {
        let f = fixture();
        let err = missing_from(&f.project.join(".git"), &["nothex".to_owned()]).unwrap_err();
        assert!(matches!(err, InspectError::InvalidId { .. }), "{err}");
    }

    #[test]
    fn dot_git_symlink_or_file_is_refused() {
        let f = fixture();
        let tmp = f._tmp.path();

        let linked = tmp.join("linked");
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(f.wt.join(".git"), linked.join(".git")).unwrap();
        let err = inspect(&linked, BRANCH).unwrap_err();
        assert!(matches!(err, InspectError::NotARepository { .. }), "{err}");
        assert!(err.to_string().contains("symlink"), "{err}");

        let gitfile = tmp.join("gitfile");
        write(
            &gitfile.join(".git"),
            &format!("gitdir: {}\n", f.wt.join(".git").display()),
        );
        let err = inspect(&gitfile, BRANCH).unwrap_err();
        assert!(matches!(err, InspectError::NotARepository { .. }), "{err}");

        let nothing = tmp.join("nothing");
        std::fs::create_dir(&nothing).unwrap();
        assert!(matches!(
            inspect(&nothing, BRANCH).unwrap_err(),
            InspectError::NotARepository { .. }
        ));
    }

    /// Plant in the job repository (and in the project configuration it includes) everything that
    /// would make a careless status run a command; return the marker files those would create.
    fn plant_traps(f: &Fixture) -> Vec<PathBuf> {
        let markers: Vec<PathBuf> = (1..=7)
            .map(|n| f._tmp.path().join(format!("marker{n}")))
            .collect();
        let touch = |n: usize| format!("touch {}", markers[n - 1].display());
        let elsewhere = f._tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let config = f.wt.join(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(&format!(
            "[filter \"evil\"]\n\tclean = {}; cat\n\tsmudge = {}; cat\n\trequired = true\n\
             [FILTER \"proc\"]\n\tprocess = {}\n\
             [diff \"evil\"]\n\ttextconv = {}\n\tcommand = {}\n\
             [core]\n\tfsmonitor = {}\n\thooksPath = {}\n\tworktree = {}\n\
             [include]\n\tpath = {}\n",
            touch(1),
            touch(1),
            touch(2),
            touch(3),
            touch(3),
            touch(4),
            f.wt.join(".git/evil-hooks").display(),
            elsewhere.display(),
            f.project.join(".git/config").display(),
        ));
        std::fs::write(&config, text).unwrap();
        let mut project_config = std::fs::read_to_string(f.project.join(".git/config")).unwrap();
        project_config.push_str(&format!("[filter \"evil\"]\n\tclean = {}\n", touch(5)));
        std::fs::write(f.project.join(".git/config"), project_config).unwrap();
        for hook in ["post-index-change", "reference-transaction", "pre-commit"] {
            for dir in [".git/hooks", ".git/evil-hooks"] {
                let path = f.wt.join(dir).join(hook);
                write(&path, &format!("#!/bin/sh\n{}\n", touch(6)));
                let mut perms = std::fs::metadata(&path).unwrap().permissions();
                std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
                std::fs::set_permissions(&path, perms).unwrap();
            }
        }
        write(
            &f.wt.join(".gitattributes"),
            "* filter=evil diff=evil\nb.txt filter=proc\n",
        );
        write(&f.wt.join(".git/info/attributes"), "* filter=evil\n");
        // Same size, new content, a different mtime: the status cannot decide on stat data and
        // size alone and must hash the file, which is when a clean filter would run.
        for (name, content) in [("a.txt", "ALPHA\n"), ("b.txt", "BRAVO\n")] {
            let path = f.wt.join(name);
            let before = std::fs::read(&path).unwrap();
            write(&path, content);
            assert_eq!(before.len(), content.len());
            let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            file.set_modified(
                std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000),
            )
            .unwrap();
        }
        markers
    }

    #[test]
    fn nothing_planted_in_the_repository_runs() {
        let f = fixture();
        let markers = plant_traps(&f);
        let got = inspect(&f.wt, BRANCH).unwrap();
        for marker in &markers {
            assert!(
                !marker.exists(),
                "{} was created: something ran",
                marker.display()
            );
        }
        assert_eq!(
            got.modified, 2,
            "a.txt and b.txt are modified, seen without any filter: {got:?}"
        );
        assert_eq!(got.untracked, 1, ".gitattributes: {got:?}");
        assert_eq!(
            got.head_branch.as_deref(),
            Some(BRANCH),
            "core.worktree is ignored"
        );
    }

    /// The control for the test above: the same traps with a repository opened the ordinary
    /// (trusting) way do run the planted clean filter, so the test above would notice a regression.
    #[test]
    fn planted_filter_would_run_if_the_repository_were_trusted() {
        let f = fixture();
        let markers = plant_traps(&f);
        write(&f.wt.join(".gitattributes"), "* filter=evil\n");
        let mut repo = gix::open_opts(f.wt.join(".git"), gix::open::Options::isolated()).unwrap();
        repo.set_workdir(f.wt.clone()).unwrap();
        // Whether that status then succeeds depends on how the planted commands treat their
        // pipes; what matters is that they were spawned.
        let _ = count_status(&repo, &mut Inspection::default());
        assert!(
            markers[0].exists(),
            "a trusting status runs the planted clean filter; if gix stopped doing so, this control is moot"
        );
        write(&f.wt.join(".gitattributes"), "* filter=proc\n");
        std::fs::remove_file(f.wt.join(".git/info/attributes")).unwrap();
        let _ = count_status(&repo, &mut Inspection::default());
        assert!(
            markers[1].exists(),
            "a trusting status runs the planted process filter"
        );
    }

    #[test]
    fn redirections_and_broken_gitmodules_do_not_derail_it() {
        let f = fixture();
        let config = f.wt.join(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(
            "[core]\n\tbare = true\n\tworktree =\n[extensions]\n\tworktreeConfig = true\n",
        );
        std::fs::write(&config, text).unwrap();
        write(
            &f.wt.join(".git/config.worktree"),
            "[core]\n\tworktree = /\n",
        );
        write(
            &f.wt.join(".gitmodules"),
            "[submodule \"x\"\n\tpath = \n[[[ not a config\n",
        );
        write(&f.wt.join("a.txt"), "alpha, changed\n");
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!((got.modified, got.untracked), (1, 1), "{got:?}");
    }

    #[test]
    fn inspection_writes_nothing() {
        let f = fixture();
        // Make the index stale for every file (same content, new mtimes) so a status would like
        // to refresh and write it.
        for name in ["a.txt", "b.txt", "src/lib.rs"] {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(f.wt.join(name))
                .unwrap();
            file.set_modified(
                std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_100_000_000),
            )
            .unwrap();
        }
        let snapshot = |dir: &Path| {
            let mut all = Vec::new();
            let mut stack = vec![dir.to_owned()];
            while let Some(dir) = stack.pop() {
                for entry in std::fs::read_dir(&dir).unwrap() {
                    let entry = entry.unwrap();
                    let meta = entry.metadata().unwrap();
                    if meta.is_dir() {
                        stack.push(entry.path());
                    } else {
                        all.push((entry.path(), meta.len(), meta.modified().unwrap()));
                    }
                }
            }
            all.sort();
            all
        };
        let git_before = snapshot(&f.wt.join(".git"));
        let project_before = snapshot(&f.project.join(".git"));
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!(got.modified, 0, "{got:?}");
        missing_from(&f.project.join(".git"), std::slice::from_ref(&f.base)).unwrap();
        assert_eq!(snapshot(&f.wt.join(".git")), git_before);
        assert_eq!(snapshot(&f.project.join(".git")), project_before);
    }
}
