//! Repositories inside the job's worktree that its index names as gitlinks (a submodule, or a
//! repository the job made and `git add`ed), and those its status finds ignored (a clone in an
//! ignored `vendor/`, at any depth, bare ones too): their files and their commits live in the
//! worktree (`sub/.git`, or `.git/modules/<name>` through a gitfile), so removing it removes them,
//! while the job's own status never looks inside one. Each is read as the job's repository is
//! (opened the one safe way, its files bounded, no driver known, no exclude rule it wrote in
//! `info/exclude` trusted); it holds work when its status is not clean, or when its HEAD or one of
//! its refs holds a commit no remote-tracking ref of its own reaches (a submodule checked out as
//! cloned does not; a repository made in the worktree with a commit always does).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;
use gix::ObjectId;

use super::bounds::{check_head, MAX_PATHS};
use super::error::InspectError;
use super::forged::CheckedOut;
use super::inspection::Inspection;
use super::layout::check_layout;
use super::linked::{canonical, kind_of, read_small, resolved};
use super::loose::loose_files;
use super::open::{open_refs, open_untrusted};
use super::patterns::{check_excludes, ProjectExcludes};
use super::published::published;
use super::status::count_status;
use super::unwalked::in_git_dir;

/// The most gitlinks looked into.
const MAX_LINKS: usize = 1_000;

/// For each gitlink of `repo`'s index populated inside `worktree`, and each repository of
/// `ignored` (relative to `worktree`: what its status found ignored), that holds work, a line
/// saying what (`sub: 2 modified, 1 untracked`, `sub: commits no remote has`); a clean nested
/// repository's own are looked into in turn (`sub/inner: …`), at most `MAX_LINKS` in all.
pub(super) fn nested_work(
    worktree: &Path,
    repo: &gix::Repository,
    (ignored, hidden): (Vec<PathBuf>, Vec<PathBuf>),
    checked_out: CheckedOut,
) -> Result<Vec<String>, InspectError> {
    let inside = canonical(worktree)?;
    let mut work = Vec::new();
    let mut budget = Budget {
        links: MAX_LINKS,
        paths: MAX_PATHS,
        seen: HashSet::new(),
        checked_out,
    };
    // The job's own linked worktrees found ignored (`git worktree add target/side`) or in its git
    // directory: their status counted already (linked_status.rs), their git directories the job's.
    let own = canonical(&worktree.join(".git"))?.join("worktrees");
    let mut repositories = Vec::new();
    for (rel, origin) in found(ignored, hidden) {
        let linked = git_dir_of(&worktree.join(&rel), &inside)?;
        // And their git directories themselves (`.git/worktrees/<name>`, read by linked.rs).
        let admin = origin == Origin::Hidden && canonical(&worktree.join(&rel))?.starts_with(&own);
        if !admin && !linked.is_some_and(|git_dir| git_dir.starts_with(&own)) {
            repositories.push((rel, origin));
        }
    }
    let at = Level {
        top: worktree,
        shown: Path::new(""),
        depth: 0,
    };
    links_of(&at, repo, repositories, &inside, &mut budget, &mut work)?;
    Ok(work)
}

/// What the nested repositories of one worktree may cost, all together: gitlinks looked at, and
/// paths of their HEADs' trees (one repository's bound); the git directories already looked into
/// (one reached by two gitlinks fails the inspection); when the worktree was checked out.
struct Budget {
    links: usize,
    paths: u64,
    seen: HashSet<PathBuf>,
    checked_out: CheckedOut,
}

/// A repository whose gitlinks are looked into: its work tree, its path as shown (relative to the
/// job's worktree), and how deep it is.
struct Level<'a> {
    top: &'a Path,
    shown: &'a Path,
    depth: usize,
}

/// The deepest a nested repository is looked into.
const MAX_DEPTH: usize = 8;

impl Level<'_> {
    /// The level of the repository at `top` (shown as `shown`) inside this one's.
    fn deeper<'a>(&self, top: &'a Path, shown: &'a Path) -> Result<Level<'a>, InspectError> {
        if self.depth + 1 >= MAX_DEPTH {
            return Err(not_repo(top, &format!("nested more than {MAX_DEPTH} deep")));
        }
        Ok(Level {
            top,
            shown,
            depth: self.depth + 1,
        })
    }
}

/// The repositories found `ignored` (or in directories of tracked files) and `hidden` (in a git
/// directory), each with where it was found.
fn found(ignored: Vec<PathBuf>, hidden: Vec<PathBuf>) -> Vec<(PathBuf, Origin)> {
    let ignored = ignored.into_iter().map(|rel| (rel, Origin::Ignored));
    ignored
        .chain(hidden.into_iter().map(|rel| (rel, Origin::Hidden)))
        .collect()
}

/// Where a nested repository was found.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// A gitlink of the index above, recording this commit.
    Gitlink(ObjectId),
    /// Among what the status above found ignored, or in a directory of its tracked files.
    Ignored,
    /// Inside the git directory above (unwalked.rs): a submodule's own git directory there, seen
    /// through its gitlink already, is not looked into twice.
    Hidden,
}

/// The repositories `at` holds: its index's gitlinks (with the commit recorded for each), then
/// those of `others`.
fn links_of(
    at: &Level<'_>,
    repo: &gix::Repository,
    others: Vec<(PathBuf, Origin)>,
    inside: &Path,
    budget: &mut Budget,
    work: &mut Vec<String>,
) -> Result<(), InspectError> {
    let index = repo.index_or_empty().map_err(|source| InspectError::Git {
        path: at.top.to_owned(),
        what: "cannot read the index",
        source,
    })?;
    let links: Vec<(PathBuf, Origin)> = index
        .entries()
        .iter()
        .filter(|e| e.mode == gix::index::entry::Mode::COMMIT)
        .map(|e| {
            let path = PathBuf::from(OsStr::from_bytes(e.path(&index).as_bytes()));
            (path, Origin::Gitlink(e.id))
        })
        .chain(others)
        .take(budget.links + 1)
        .collect();
    if links.len() > budget.links {
        return Err(not_repo(at.top, &format!("more than {MAX_LINKS} gitlinks")));
    }
    budget.links -= links.len();
    let here = canonical(at.top)?;
    for (rel, origin) in links {
        let top = at.top.join(&rel);
        let shown = at.shown.join(&rel);
        // Through a link on its way, the directory is not where the index says: what is there lies
        // outside the worktree (not removed with it) or at its own path inside it (seen there).
        if resolved(&top)?.as_deref() != Some(here.join(&rel).as_path()) {
            continue;
        }
        let say = |what: String| {
            format!(
                "{}: {what}",
                crate::controls::name(&shown.to_string_lossy())
            )
        };
        let Some(git_dir) = git_dir_of(&top, inside)? else {
            let bare = match origin {
                Origin::Gitlink(_) => {
                    work.extend(loose_files(&top, inside)?.map(say));
                    continue;
                }
                // A directory that is itself a git directory: a bare repository.
                _ => bare_work(&top, budget, origin)?,
            };
            match bare {
                None => {}
                Some((_, Held::Work(what))) => work.push(say(what)),
                Some((bare, Held::Clean { inner })) => {
                    let deeper = at.deeper(&top, &shown)?;
                    links_of(&deeper, &bare, inner, inside, budget, work)?;
                }
            }
            continue;
        };
        // A second work tree of one git directory: its files are no status's (the index is the
        // first's), so nothing can tell what of them is work. Kept, why given.
        if !budget.seen.insert(git_dir.clone()) {
            if origin == Origin::Hidden {
                continue;
            }
            return Err(not_repo(
                &top,
                "a second work tree of a git directory already seen",
            ));
        }
        let nested = open_nested(&top, &git_dir)?;
        let recorded = match origin {
            Origin::Gitlink(id) => Some(id),
            Origin::Ignored | Origin::Hidden => None,
        };
        let inner = match holds_work(&nested, (&top, &git_dir), recorded, budget)? {
            Held::Work(what) => {
                work.push(say(what));
                continue;
            }
            Held::Clean { inner } => inner,
        };
        let deeper = at.deeper(&top, &shown)?;
        links_of(&deeper, &nested, inner, inside, budget, work)?;
    }
    Ok(())
}

/// The bare repository at `top` (a directory found to be one, `origin` saying where), opened, and
/// what it holds: commits no remote-tracking ref of its own reaches, or the repositories inside
/// it; `None` when `top` is none after all, or one inside the git directory above already looked
/// into. A `HEAD` that is a link counts (git follows it), for the layout check to refuse.
fn bare_work(
    top: &Path,
    budget: &mut Budget,
    origin: Origin,
) -> Result<Option<(gix::Repository, Held)>, InspectError> {
    let head = kind_of(&top.join("HEAD"))?;
    if !head.is_some_and(|kind| kind.is_file() || kind.is_symlink()) {
        return Ok(None);
    }
    let git_dir = canonical(top)?;
    if !budget.seen.insert(git_dir.clone()) {
        return match origin {
            Origin::Hidden => Ok(None),
            _ => Err(not_repo(top, "a git directory already seen")),
        };
    }
    check_layout(&git_dir).map_err(|e| relabel(top, e))?;
    check_excludes(&git_dir, &ProjectExcludes::default())
        .map_err(|reason| untrusted(top, reason))?;
    let repo = open_refs(&git_dir)?;
    if !published(&repo, (top, &git_dir))? {
        return Ok(Some((
            repo,
            Held::Work("commits no remote of it has".into()),
        )));
    }
    let hidden = in_git_dir(top, top).map_err(|reason| not_repo(top, &reason))?;
    let inner = found(Vec::new(), hidden);
    Ok(Some((repo, Held::Clean { inner })))
}

/// The git directory of the repository populated at `top`, when there is one inside `inside`: a
/// real `.git` directory, or the one a `.git` gitfile names.
fn git_dir_of(top: &Path, inside: &Path) -> Result<Option<PathBuf>, InspectError> {
    let dot_git = top.join(".git");
    let Some(kind) = kind_of(&dot_git)? else {
        return Ok(None);
    };
    let named = if kind.is_dir() {
        dot_git
    } else if kind.is_file() {
        let Some(content) = read_small(&dot_git, 4 << 10)? else {
            return Ok(None);
        };
        let Some(path) = content.trim().strip_prefix(b"gitdir:") else {
            return Ok(None);
        };
        top.join(Path::new(OsStr::from_bytes(path.trim())))
    } else {
        return Ok(None);
    };
    // What lies outside the worktree is not removed with it.
    match resolved(&named)? {
        Some(real) if real.starts_with(inside) && canonical(top)?.starts_with(inside) => {
            Ok(Some(real))
        }
        _ => Ok(None),
    }
}

/// The repository at `top` (git dir `git_dir`), opened as the job's is: no rule of its
/// `info/exclude` is trusted (none is the user's to vouch for).
fn open_nested(top: &Path, git_dir: &Path) -> Result<gix::Repository, InspectError> {
    check_layout(git_dir).map_err(|e| relabel(top, e))?;
    check_excludes(git_dir, &ProjectExcludes::default())
        .map_err(|reason| untrusted(top, reason))?;
    let repo = open_untrusted(top, git_dir)?;
    check_head(&repo).map_err(|reason| not_repo(top, &reason))?;
    Ok(repo)
}

/// What a nested repository holds.
enum Held {
    /// Work, said as a line.
    Work(String),
    /// None; these repositories are in it (relative to its work tree): those its status found
    /// ignored or in directories of tracked files, and those inside its git directory.
    Clean { inner: Vec<(PathBuf, Origin)> },
}

/// What work the nested repository `repo` at `top` holds, if any; `recorded` is the commit the
/// index above it records for it (none for a repository found ignored); its status is charged to
/// the nested repositories' `budget`.
fn holds_work(
    repo: &gix::Repository,
    (top, git_dir): (&Path, &Path),
    recorded: Option<ObjectId>,
    budget: &mut Budget,
) -> Result<Held, InspectError> {
    let mut counts = Inspection::default();
    let what = "cannot compute the status of a nested repository";
    let git = |source| InspectError::Git {
        path: top.to_owned(),
        what,
        source,
    };
    let ignored = count_status(repo, &mut counts, &mut budget.paths, budget.checked_out);
    let ignored = ignored.map_err(git)?;
    let dirty: Vec<String> = [
        (counts.modified, "modified"),
        (counts.untracked, "untracked"),
        (counts.conflicted, "conflicted"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if !dirty.is_empty() {
        return Ok(Held::Work(dirty.join(", ")));
    }
    // git's status of the repository above shows it as changed (` M sub`, new commits).
    let head = repo.head_id().ok().map(|id| id.detach());
    if recorded.is_some_and(|recorded| head != Some(recorded)) {
        return Ok(Held::Work(
            "checked out at another commit than the index records".into(),
        ));
    }
    if !published(repo, (top, git_dir))? {
        return Ok(Held::Work("commits no remote of it has".into()));
    }
    let hidden = in_git_dir(top, git_dir).map_err(|reason| not_repo(top, &reason))?;
    Ok(Held::Clean {
        inner: found(ignored, hidden),
    })
}

fn not_repo(path: &Path, reason: &str) -> InspectError {
    InspectError::NotARepository {
        path: path.to_owned(),
        reason: format!("a nested repository: {reason}"),
    }
}

fn untrusted(path: &Path, reason: String) -> InspectError {
    InspectError::Untrusted {
        path: path.to_owned(),
        reason: format!("a nested repository: {reason}"),
    }
}

/// A layout error of a nested repository, said as one.
fn relabel(top: &Path, e: InspectError) -> InspectError {
    match e {
        InspectError::NotARepository { reason, .. } => not_repo(top, &reason),
        other => other,
    }
}
