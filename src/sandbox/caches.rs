//! Caches for jobs: package managers and build tools find a writable cache in every profile,
//! isolate's, never the user's own. A job's cache is kept per user and per project under the state
//! directory (`<state>/caches/<project>/<tool>`), and lasts from one job of the project to the next:
//! the second `npm install` downloads nothing. Never shared between projects: a job is hostile,
//! and the tools check what they download (npm's integrity, cargo's checksums, Go's sums) but not
//! everything they keep (cached registry metadata, built wheels, build outputs), so an entry one
//! project's job planted could reach another project's dependencies. Nothing a job writes is ever
//! read by the user's own unsandboxed tools.
//!
//! In the namespaces tier the user's cache is read through: an overlay is mounted on the user's
//! own directory (`~/.npm`, `~/.cache`, `~/.cargo`, …) with the user's cache at the bottom, the
//! project's jobs' cache above it and a layer of the job's own on top, which the job writes; when
//! the job has ended its new files are moved into the project's jobs' cache ([`publish`]), which
//! nothing else writes. A warm
//! `npm ci` reads the user's cache, a new package lands in the jobs' cache, and the user's
//! directory never changes. The credential stores beneath an overlaid directory
//! (`~/.cargo/credentials.toml`) are hidden by a mount over them. Where the user has no such
//! directory, and in the Landlock-only tier, the tool's own variable points at a cache of the
//! project's jobs written directly (`<state>/caches/<project>/direct/<tool>`; no read-through: the
//! first job downloads), never the overlays' layer.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::namespaces::Overlay;

/// One tool's cache: where the user keeps it, the variable that moves it, and what of it is worth
/// keeping for the next job.
struct Tool {
    /// The cache's name under the project's jobs' cache.
    name: &'static str,
    /// The user's own cache, beneath the home directory.
    home: &'static str,
    /// The variables that point the tool at a cache of isolate's (with a subdirectory of it), when
    /// there is nothing to overlay.
    vars: &'static [(&'static str, &'static str)],
    /// What of the job's writes is kept for the project's next jobs (empty: everything).
    keep: &'static [&'static str],
}

/// The tools, most specific first: a cache beneath another's home (`~/.cache/pip` in
/// `~/.cache`) is the outer one's when that one is overlaid.
const TOOLS: &[Tool] = &[
    Tool {
        name: "npm",
        home: ".npm",
        vars: &[("npm_config_cache", "")],
        keep: &[],
    },
    Tool {
        name: "cargo",
        home: ".cargo",
        vars: &[("CARGO_HOME", "")],
        // Never its binaries or configuration: what the project's next job would run.
        keep: &["registry", "git"],
    },
    Tool {
        name: "go",
        home: "go/pkg/mod",
        vars: &[("GOMODCACHE", "")],
        keep: &[],
    },
    Tool {
        name: "xdg-cache",
        home: ".cache",
        vars: &[
            ("PIP_CACHE_DIR", "pip"),
            ("UV_CACHE_DIR", "uv"),
            ("GOCACHE", "go-build"),
            ("YARN_CACHE_FOLDER", "yarn"),
            ("PRE_COMMIT_HOME", "pre-commit"),
            ("POETRY_CACHE_DIR", "pypoetry"),
            ("DENO_DIR", "deno"),
        ],
        keep: &[],
    },
    Tool {
        name: "virtualenv",
        home: ".local/share/virtualenv",
        vars: &[("VIRTUALENV_OVERRIDE_APP_DATA", "")],
        keep: &[],
    },
    Tool {
        name: "pnpm",
        home: ".local/share/pnpm/store",
        // npm warns of `npm_config_store_dir` on every command: the store is overlaid where the
        // user has one, and otherwise left to pnpm.
        vars: &[],
        keep: &[],
    },
    Tool {
        name: "bun",
        home: ".bun/install/cache",
        vars: &[("BUN_INSTALL_CACHE_DIR", "")],
        keep: &[],
    },
    Tool {
        name: "maven",
        home: ".m2/repository",
        vars: &[],
        keep: &[],
    },
];

/// What a job's caches come to.
#[derive(Debug, Default)]
pub struct Caches {
    /// Overlays on the user's own caches (the namespaces tier).
    pub overlays: Vec<Overlay>,
    /// Credential stores beneath an overlaid directory, hidden by a mount over each.
    pub hidden: Vec<PathBuf>,
    /// Directories the job writes: each overlay's target, each cache a variable points at.
    pub write: Vec<PathBuf>,
    /// Variables set for the job.
    pub env: Vec<(String, OsString)>,
    /// The job's own layers, to publish and remove when it has ended.
    pub layers: Vec<Layer>,
}

/// A job's own layer of one overlay: what it wrote, and where what is kept of it goes.
#[derive(Debug, Clone)]
pub struct Layer {
    pub upper: PathBuf,
    pub into: PathBuf,
    pub keep: Vec<PathBuf>,
}

/// Where the caches of a job go.
pub struct Places<'a> {
    pub home: &'a Path,
    /// `<state>/caches/<project>`.
    pub project: &'a Path,
    /// The job's own directory for its layers (`<job>/caches`).
    pub job: &'a Path,
    /// isolate's own directories (the state directory, the worktree root): no overlay over them.
    pub ours: &'a [PathBuf],
    /// Overlays can be mounted (the namespaces tier).
    pub overlay: bool,
    /// The caller's environment: a tool the user already pointed elsewhere is left alone.
    pub env: &'a [(OsString, OsString)],
    /// The credential stores, expanded.
    pub stores: &'a [PathBuf],
    /// Whether the job's rules let it read a directory of the user's (its every entry but the
    /// credential stores): only such a directory is read through (under `strict` the rest of the
    /// home directory stays unread).
    pub readable: &'a dyn Fn(&Path) -> bool,
}

/// The caches of one job: made on disk (the project's and the job's directories), as overlays,
/// variables and writable directories.
pub fn plan(places: &Places<'_>) -> std::io::Result<Caches> {
    let mut caches = Caches::default();
    let set_by_user = |var: &str| places.env.iter().any(|(k, _)| k == var);
    for tool in TOOLS {
        let user = places.home.join(tool.home);
        let shared = places.project.join(tool.name);
        std::fs::create_dir_all(&shared)?;
        let inside_another = caches.overlays.iter().any(|o| user.starts_with(&o.target));
        if inside_another {
            continue;
        }
        // Never over a directory that holds isolate's own (a state directory under ~/.cache): the
        // overlay's layers would overlap, and the job would see its own state through it.
        let holds_ours = places.ours.iter().any(|p| p.starts_with(&user));
        let overlaid = places.overlay
            && !holds_ours
            && std::fs::symlink_metadata(&user).is_ok_and(|m| m.is_dir())
            && (places.readable)(&user)
            && tool.vars.iter().all(|(var, _)| !set_by_user(var));
        if overlaid {
            let layer = places.job.join(tool.name);
            let (upper, work) = (layer.join("upper"), layer.join("work"));
            std::fs::create_dir_all(&upper)?;
            std::fs::create_dir_all(&work)?;
            caches.overlays.push(Overlay {
                target: user.clone(),
                lower: vec![shared.clone(), user.clone()],
                upper: upper.clone(),
                work,
            });
            // Every store beneath it is hidden, those that do not exist yet too (`cargo login` in
            // another terminal while the job runs would write one into the layer below): an empty
            // file of the job's layer is their mount point, which the job cannot remove.
            for store in places.stores.iter().filter(|s| s.starts_with(&user)) {
                if std::fs::symlink_metadata(store).is_err() {
                    placeholder(&upper, store.strip_prefix(&user).unwrap_or(store))?;
                }
                caches.hidden.push(store.clone());
            }
            caches.write.push(user);
            caches.layers.push(Layer {
                upper,
                into: shared,
                keep: tool.keep.iter().map(PathBuf::from).collect(),
            });
            continue;
        }
        // Written directly by the job: never the overlays' layer (what a job leaves there, a link,
        // a binary, is never what another job's overlay shows: only `publish` writes that).
        let direct = places.project.join("direct").join(tool.name);
        for (var, sub) in tool.vars {
            if set_by_user(var) {
                continue;
            }
            let dir = direct.join(sub);
            std::fs::create_dir_all(&dir)?;
            caches
                .env
                .push((var.to_string(), dir.clone().into_os_string()));
            if !caches.write.contains(&direct) {
                caches.write.push(direct.clone());
            }
        }
        if tool.name == "cargo" && caches.env.iter().any(|(k, _)| k == "CARGO_HOME") {
            link_cargo_config(places.home, &direct);
        }
    }
    Ok(caches)
}

/// An empty file at `rel` beneath the job's layer `upper` (its directories made), the mount point
/// that hides a store the user has not made yet.
fn placeholder(upper: &Path, rel: &Path) -> std::io::Result<()> {
    let path = upper.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map(drop)
}

/// A cargo home of isolate's reads the user's configuration (registries, mirrors, build
/// settings) through a link; never the credentials, which stay where they are.
fn link_cargo_config(home: &Path, shared: &Path) {
    for name in ["config.toml", "config"] {
        let user = home.join(".cargo").join(name);
        let link = shared.join(name);
        if user.is_file() && std::fs::symlink_metadata(&link).is_err() {
            let _ = std::os::unix::fs::symlink(&user, &link);
        }
    }
}

/// What a job that has ended wrote into its layers, moved into the project's jobs' caches (each
/// entry renamed into place, a directory merged into one already there); then the layers
/// removed. Never follows a link, on either side: the job's layer is its own, and the project's
/// jobs' cache is written directly by the project's other jobs (the Landlock-only tier, `strict`,
/// a tool the user has no directory for), which may have made any of its directories a link, or
/// swap one for a link while this runs. Every directory is therefore opened relative to its
/// parent's descriptor with `O_NOFOLLOW`, and every entry renamed relative to the descriptors of
/// the two directories that hold it: a link is moved as a link, and never walked. Skips what the
/// overlay wrote for itself (a whiteout, a device) and what is not worth keeping. Returns how
/// many entries were kept.
pub fn publish(layers: &[Layer], job: &Path) -> u64 {
    let mut kept = 0;
    for layer in layers {
        let mut budget = ENTRIES_MAX;
        // Both are isolate's own directories, which no job can replace (a job writes beneath them).
        let (Ok(from), Ok(into)) = (open_dir_path(&layer.upper), open_dir_path(&layer.into)) else {
            continue;
        };
        if layer.keep.is_empty() {
            kept += merge(&from, &into, &mut budget, 0);
            continue;
        }
        for sub in &layer.keep {
            let name = sub.as_os_str();
            let Ok(from) = open_dir_at(&from, name) else {
                continue;
            };
            // Made where missing; a link or anything else there that is not a directory is left
            // alone, and nothing is kept into it.
            let _ = nix::sys::stat::mkdirat(
                &into,
                name,
                nix::sys::stat::Mode::from_bits_truncate(0o755),
            );
            if let Ok(into) = open_dir_at(&into, name) {
                kept += merge(&from, &into, &mut budget, 0);
            }
        }
    }
    let _ = crate::sys::remove::remove_tree(job);
    kept
}

/// The most entries one layer's publishing looks at, and how deep it goes.
const ENTRIES_MAX: u64 = 1_000_000;
const DEPTH_MAX: usize = 64;

/// A directory by its path, the last component not followed if a link.
fn open_dir_path(path: &Path) -> nix::Result<std::os::fd::OwnedFd> {
    open_dir_at(&nix::fcntl::AT_FDCWD, path.as_os_str())
}

/// The directory `name` in `dir`, never through a link.
fn open_dir_at(
    dir: &impl std::os::fd::AsFd,
    name: &std::ffi::OsStr,
) -> nix::Result<std::os::fd::OwnedFd> {
    use nix::fcntl::OFlag;
    nix::fcntl::openat(
        dir,
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
}

/// The kind of `name` in `dir`, not following a link: `None` where it is gone.
fn kind_at(dir: &impl std::os::fd::AsFd, name: &std::ffi::OsStr) -> Option<nix::sys::stat::SFlag> {
    use nix::sys::stat::SFlag;
    let st = nix::sys::stat::fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
    Some(SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT)
}

/// Moves every entry of the directory `from` into the directory `into` (both held by descriptor):
/// a file, a link or a new directory by rename, a directory already there by merging into it.
fn merge(
    from: &std::os::fd::OwnedFd,
    into: &std::os::fd::OwnedFd,
    budget: &mut u64,
    depth: usize,
) -> u64 {
    use nix::fcntl::{renameat, renameat2, RenameFlags};
    use nix::sys::stat::SFlag;
    use std::os::fd::AsFd;
    use std::os::unix::ffi::OsStrExt;
    if depth > DEPTH_MAX {
        return 0;
    }
    let Ok(listing) = nix::unistd::dup(from.as_fd()).and_then(nix::dir::Dir::from_fd) else {
        return 0;
    };
    let names: Vec<std::ffi::OsString> = listing
        .into_iter()
        .flatten()
        .map(|e| std::ffi::OsStr::from_bytes(e.file_name().to_bytes()).to_os_string())
        .filter(|n| n != "." && n != "..")
        .collect();
    let mut kept = 0;
    for name in names {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let name = name.as_os_str();
        let Some(kind) = kind_at(from, name) else {
            continue;
        };
        if kind != SFlag::S_IFDIR && kind != SFlag::S_IFREG && kind != SFlag::S_IFLNK {
            continue;
        }
        if kind == SFlag::S_IFDIR {
            match kind_at(into, name) {
                Some(SFlag::S_IFDIR) => {
                    if let (Ok(f), Ok(i)) = (open_dir_at(from, name), open_dir_at(into, name)) {
                        kept += merge(&f, &i, budget, depth + 1);
                    }
                }
                Some(_) => {}
                None => {
                    let moved = renameat2(from, name, into, name, RenameFlags::RENAME_NOREPLACE);
                    if moved.is_ok() {
                        kept += 1;
                    }
                }
            }
            continue;
        }
        // A file or a link: the job's newer copy takes the place of the older (a directory there
        // stays: rename refuses to put a file in its place).
        let replaceable = kind_at(into, name) != Some(SFlag::S_IFDIR);
        if replaceable && renameat(from, name, into, name).is_ok() {
            kept += 1;
        }
    }
    kept
}

/// The jobs' caches of every project: `<state>/caches`.
pub fn root(state: &Path) -> PathBuf {
    state.join("caches")
}

/// The bytes the files beneath `dir` take (links not followed), and how many there are.
pub fn size(dir: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let mut bytes = 0;
    let mut files = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                files += 1;
                bytes += meta.blocks() * 512;
            }
        }
    }
    (bytes, files)
}
