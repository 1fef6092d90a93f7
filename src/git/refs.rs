//! The project's refs read in-process (gix) for the few reads every start and clean-up make: HEAD,
//! its branch, and refs named in full. Each answers only what it can answer as git's files backend
//! would; anything else (refs in a reftable, a symbolic ref where an id is expected, a name that
//! could be ambiguous, an error) is `None`, and the caller asks git as before. Opened isolated: the
//! repository's own config file only (nothing read here runs a program), no includes, no
//! environment variable (`GIT_DIR` and the like never point it elsewhere).

use std::path::Path;

use gix::bstr::ByteSlice;

/// The repository whose checkout (or git dir) is `dir`, as `git -C dir` finds it at its top; `None`
/// for refs kept in a reftable, which gix does not read.
fn open(dir: &Path, common_dir: &Path) -> Option<gix::Repository> {
    if common_dir.join("reftable").exists() {
        return None;
    }
    let options = gix::open::Options::isolated().config_overrides(["core.useReplaceRefs=false"]);
    gix::open_opts(dir, options).ok()
}

/// The commit HEAD of the checkout at `top` resolves to (`git rev-parse --verify HEAD^{commit}`);
/// `None` when that takes git (an unborn HEAD, a missing object: git says what).
pub(super) fn head_commit(top: &Path, common_dir: &Path) -> Option<String> {
    let repo = open(top, common_dir)?;
    let commit = repo.head_commit().ok()?;
    Some(commit.id.to_string())
}

/// What `git symbolic-ref --quiet --short HEAD` says in the checkout at `top`: `Some(None)` when
/// HEAD is detached, `Some(Some(branch))` for a branch whose short name no other ref could claim
/// (`refs/<name>`, `refs/tags/<name>`, a root ref), `None` when git must shorten it.
pub(super) fn head_branch(top: &Path, common_dir: &Path) -> Option<Option<String>> {
    let repo = open(top, common_dir)?;
    let head = repo.head().ok()?;
    let name = match &head.kind {
        gix::head::Kind::Detached { .. } => return Some(None),
        gix::head::Kind::Symbolic(r) => r.name.as_bstr().to_owned(),
        gix::head::Kind::Unborn(name) => name.as_bstr().to_owned(),
    };
    let short = name.strip_prefix(b"refs/heads/")?.to_str().ok()?;
    // git tries `<short>` (a root ref: upper case and `_` only; else any name read as a file of
    // the git directory, `$GIT_DIR/main` as well), `refs/<short>` and `refs/tags/<short>` before
    // `refs/heads/<short>`; any of them there, and git says more.
    if short.is_empty() || short.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
        return None;
    }
    let beside = |dir: &Path| dir.join(short).symlink_metadata().is_ok();
    if beside(common_dir) || beside(repo.git_dir()) || beside(repo.common_dir()) {
        return None;
    }
    for shadow in [format!("refs/{short}"), format!("refs/tags/{short}")] {
        if !matches!(exact(&repo, &shadow)?, Exact::Missing) {
            return None;
        }
    }
    Some(Some(short.to_string()))
}

/// The object id each full ref name of `names` points at, as `git for-each-ref` lists it (`None`:
/// no such ref); `None` for all when one of them needs git (a symbolic ref, a missing object).
pub(super) fn values<const N: usize>(
    top: &Path,
    common_dir: &Path,
    names: [&str; N],
) -> Option<[Option<String>; N]> {
    let repo = open(top, common_dir)?;
    let mut out: [Option<String>; N] = std::array::from_fn(|_| None);
    for (slot, name) in out.iter_mut().zip(names) {
        *slot = match exact(&repo, name)? {
            Exact::Missing => None,
            // for-each-ref leaves out a ref whose object is missing, with a warning: git's to say.
            Exact::Id(id) if repo.has_object(id) => Some(id.to_string()),
            Exact::Id(_) => return None,
        };
    }
    Some(out)
}

/// A ref looked up by its full name.
enum Exact {
    Missing,
    Id(gix::ObjectId),
}

/// The ref named exactly `name` (never one of the names gix would try after it); `None` when it is
/// symbolic or cannot be read.
fn exact(repo: &gix::Repository, name: &str) -> Option<Exact> {
    if !name.starts_with("refs/") {
        return None;
    }
    match repo.try_find_reference(name).ok()? {
        None => Some(Exact::Missing),
        Some(found) if found.name().as_bstr() != name.as_bytes() => None,
        Some(found) => found.target().try_id().map(|id| Exact::Id(id.to_owned())),
    }
}

/// The branch HEAD of the checkout at `top` is on (its full name) and the id that branch points
/// at; `None` when HEAD is detached, unborn or needs git to read.
pub(super) fn head_ref(top: &Path, common_dir: &Path) -> Option<(String, String)> {
    let repo = open(top, common_dir)?;
    let head = repo.head().ok()?;
    let gix::head::Kind::Symbolic(branch) = &head.kind else {
        return None;
    };
    let name = branch.name.as_bstr().to_str().ok()?;
    match exact(&repo, name)? {
        Exact::Id(id) => Some((name.to_string(), id.to_string())),
        Exact::Missing => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::scratch::git;

    /// A repository with one commit on `main`.
    fn repo() -> (tempfile::TempDir, std::path::PathBuf) {
        crate::git::scratch::repo_with_one_commit()
    }

    #[test]
    fn head_and_its_branch_read_as_git_reads_them() {
        let (_tmp, top) = repo();
        let common = top.join(".git");
        let commit = git(&top, &["rev-parse", "HEAD"]);
        assert_eq!(head_commit(&top, &common), Some(commit.clone()));
        assert_eq!(head_branch(&top, &common), Some(Some("main".into())));
        assert_eq!(
            head_ref(&top, &common),
            Some(("refs/heads/main".into(), commit.clone()))
        );
        // A tag of the branch's name: git shortens to `heads/main`, so git is asked.
        git(&top, &["tag", "main"]);
        assert_eq!(
            git(&top, &["symbolic-ref", "--short", "HEAD"]),
            "heads/main"
        );
        assert_eq!(head_branch(&top, &common), None);
        git(&top, &["tag", "-d", "main"]);
        // Packed, the branch still reads the same.
        git(&top, &["pack-refs", "--all"]);
        assert_eq!(
            head_ref(&top, &common),
            Some(("refs/heads/main".into(), commit.clone()))
        );
        // A linked worktree answers for its own HEAD.
        let linked = top.parent().unwrap().join("linked");
        git(
            &top,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "side",
                linked.to_str().unwrap(),
            ],
        );
        assert_eq!(head_branch(&linked, &common), Some(Some("side".into())));
        assert_eq!(head_branch(&top, &common), Some(Some("main".into())));
        git(&top, &["checkout", "-q", "--detach"]);
        assert_eq!(head_branch(&top, &common), Some(None));
        assert_eq!(head_ref(&top, &common), None);
        assert_eq!(head_commit(&top, &common), Some(commit));
        git(&top, &["checkout", "-q", "--orphan", "fresh"]);
        assert_eq!(head_commit(&top, &common), None, "unborn: git says so");
        assert_eq!(head_branch(&top, &common), Some(Some("fresh".into())));
    }

    #[test]
    fn a_branch_whose_name_a_file_of_the_git_dir_also_has_is_git_s_to_shorten() {
        // git's first rule for `<short>` reads `$GIT_DIR/<short>` whatever its case: a file
        // there, and `symbolic-ref --short` says `heads/<short>`.
        let (_tmp, top) = repo();
        let common = top.join(".git");
        let commit = git(&top, &["rev-parse", "HEAD"]);
        for branch in ["main", "a-b", "x/y"] {
            git(&top, &["checkout", "-q", "-B", branch]);
            let file = common.join(branch);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, format!("{commit}\n")).unwrap();
            let told = git(&top, &["symbolic-ref", "--short", "HEAD"]);
            assert_eq!(told, format!("heads/{branch}"));
            assert_eq!(head_branch(&top, &common), None, "{branch}");
            std::fs::remove_file(&file).unwrap();
        }
    }

    #[test]
    fn refs_named_in_full_read_as_for_each_ref_lists_them() {
        let (_tmp, top) = repo();
        let common = top.join(".git");
        let commit = git(&top, &["rev-parse", "HEAD"]);
        git(&top, &["update-ref", "refs/isolate/x-1234/base", &commit]);
        let names = [
            "refs/heads/main",
            "refs/isolate/x-1234/base",
            "refs/heads/gone",
        ];
        assert_eq!(
            values(&top, &common, names),
            Some([Some(commit.clone()), Some(commit.clone()), None])
        );
        // Only exact names: gix's lookup would also try `refs/heads/main` for `main`.
        assert_eq!(values(&top, &common, ["main"]), None);
        // A symbolic ref, and a ref whose object is missing: git's to list.
        git(
            &top,
            &["symbolic-ref", "refs/heads/link", "refs/heads/main"],
        );
        assert_eq!(values(&top, &common, ["refs/heads/link"]), None);
        let missing = "1".repeat(40);
        std::fs::write(common.join("refs/heads/broken"), format!("{missing}\n")).unwrap();
        assert_eq!(values(&top, &common, ["refs/heads/broken"]), None);
        // Refs in a reftable are git's to read.
        std::fs::create_dir(common.join("reftable")).unwrap();
        assert_eq!(head_commit(&top, &common), None);
    }
}
