//! The one way a repository is opened here: only its own config, every repository-local section
//! untrusted, no replace refs, every filter and diff driver dropped. Never follows an include.

use std::path::Path;

use super::error::InspectError;

/// The open options for any repository inspected here: only the repository's own config file,
/// no environment, no includes, and every repository-local section untrusted for the keys gix
/// guards with the section filter. Replace refs are switched off by an API override, which the
/// filter lets through as it is not repository-local. Two more overrides make the status judge as
/// git does on Linux: stat times to the nanosecond (git's `USE_NSEC`; gix's default is whole
/// seconds, so a fresh checkout's files, written in the index's second, would all be hashed), and
/// the index's trailing checksum not verified on reading (git verifies it only in `fsck`; the
/// entries are still parsed with their bounds). And names compared case for case, whatever the
/// job's `core.ignoreCase` says and never precomposed, the index read on one thread, change times
/// compared, and executable bits and links seen as Linux keeps them.
pub(super) fn open_options() -> gix::open::Options {
    gix::open::Options::isolated()
        .open_path_as_is(true)
        .filter_config_section(not_repository_local)
        .config_overrides([
            "core.useReplaceRefs=false",
            "gitoxide.core.useNsec=true",
            "index.skipHash=true",
            // Names compared as the kernel compares them: with the job's `core.ignoreCase` on, the
            // walk took a directory `SRC` for the index's `src`, whose pattern files were the ones
            // checked (patterns.rs).
            "core.ignoreCase=false",
            // Nor are names rewritten as they are read, which git does on macOS only: the walk
            // would look up another name than the one listed (settled.rs compares the listing's).
            "core.precomposeUnicode=false",
            // The index's entries read one after another, as git reads them: with threads, gix
            // takes them from the offsets of the index's own IEOT table, which a job wrote to
            // name other entries than the ones git reads.
            "index.threads=1",
            // Change times compared, to the nanosecond, as git compares them by default: an entry
            // is trusted only for a file unchanged since the checkout (forged.rs).
            "core.trustCTime=true",
            "core.checkStat=default",
            // An executable bit or a link the job changed is a change, as Linux keeps both,
            // whatever the job's `core.fileMode` and `core.symlinks` claim.
            "core.fileMode=true",
            "core.symlinks=true",
        ])
}

fn not_repository_local(meta: &gix::config::file::Metadata) -> bool {
    meta.source.kind() != gix::config::source::Kind::Repository
}

/// Open the user's project (its git dir, the common one) as isolated as a job's, read-only.
pub(super) fn open_project(project_git_dir: &Path) -> Result<gix::Repository, InspectError> {
    gix::open_opts(project_git_dir, open_options()).map_err(|source| InspectError::Git {
        path: project_git_dir.to_owned(),
        what: "cannot open the project repository",
        source,
    })
}

/// Open the job repository at `git_dir` with `worktree` as its work tree, safe to compute a status on.
pub(super) fn open_untrusted(
    worktree: &Path,
    git_dir: &Path,
) -> Result<gix::Repository, InspectError> {
    let git = |what: &'static str| {
        let path = worktree.to_owned();
        move |source: gix::Error| InspectError::Git { path, what, source }
    };
    let mut repo =
        gix::open_opts(git_dir, open_options()).map_err(git("cannot open the repository"))?;
    check_extensions(&repo).map_err(|reason| InspectError::NotARepository {
        path: worktree.to_owned(),
        reason,
    })?;
    // Whatever core.worktree / core.bare claim (the section filter already hides core.worktree).
    repo.set_workdir(worktree.to_owned())
        .map_err(git("cannot use the work tree"))?;
    drop_driver_sections(&mut repo).map_err(git("cannot sanitize the configuration"))?;
    // Speeds up turning HEAD^{tree} into an index for the tree-index comparison.
    repo.object_cache_size_if_unset(4 * 1024 * 1024);
    Ok(repo)
}

/// Open the bare repository at `git_dir` (one found ignored in a job's worktree) to read its refs
/// and commits only: no work tree, so no status, and no driver known.
pub(super) fn open_refs(git_dir: &Path) -> Result<gix::Repository, InspectError> {
    let git = |what: &'static str| {
        let path = git_dir.to_owned();
        move |source: gix::Error| InspectError::Git { path, what, source }
    };
    let mut repo =
        gix::open_opts(git_dir, open_options()).map_err(git("cannot open the repository"))?;
    check_extensions(&repo).map_err(|reason| InspectError::NotARepository {
        path: git_dir.to_owned(),
        reason,
    })?;
    drop_driver_sections(&mut repo).map_err(git("cannot sanitize the configuration"))?;
    Ok(repo)
}

/// The repository extensions git would honour that change nothing the inspection reads as gix
/// reads it; any other (`refStorage` but `files`, an object format but SHA-1, one gix does not
/// know) is refused: git and gix could then read different refs, objects or entries.
const HARMLESS_EXTENSIONS: [&str; 6] = [
    "noop",
    "noop-v1",
    "preciousobjects",
    "partialclone",
    "worktreeconfig",
    "relativeworktrees",
];

fn check_extensions(repo: &gix::Repository) -> Result<(), String> {
    let config = repo.config_snapshot();
    for section in config
        .plumbing()
        .sections_by_name("extensions")
        .into_iter()
        .flatten()
    {
        for name in section.body().value_names() {
            let name = name.to_ascii_lowercase();
            // Each value given, the last being git's: every one harmless.
            for value in section.body().values(&name) {
                let harmless = HARMLESS_EXTENSIONS.contains(&name.as_str())
                    || (name == "refstorage" && value.eq_ignore_ascii_case(b"files"))
                    || (name == "objectformat" && value.eq_ignore_ascii_case(b"sha1"));
                if !harmless {
                    return Err(format!(
                        "its configuration sets extensions.{} = {}, which the inspection cannot \
                         read as git does",
                        crate::controls::name(&name),
                        crate::controls::name(&String::from_utf8_lossy(&value))
                    ));
                }
            }
            // A name with no value at all (`refStorage` alone, true) is no format gix reads.
            if section.body().values(&name).is_empty()
                && !HARMLESS_EXTENSIONS.contains(&name.as_str())
            {
                return Err(format!(
                    "its configuration sets extensions.{} with no value",
                    crate::controls::name(&name)
                ));
            }
        }
    }
    Ok(())
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
