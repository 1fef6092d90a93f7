//! Credential stores found by what they are, not by their name: a list of names always trails the
//! tools people install (a new browser channel, an Electron app, a REPL). Each family may say how
//! its other stores are found, in directories listed once each, one level deep (never a walk of
//! the home directory: this runs at every launch): a directory holding a marker file (a
//! Chromium-based browser's `Local State`, an Electron app's `Local Storage`, a Mozilla-based
//! one's `profiles.ini`), or an entry whose name says what it is (`.irb_history`).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use nix::fcntl::AtFlags;
use nix::sys::stat::fstatat;

/// How a family's stores are found besides its named ones.
#[derive(Debug, Clone, Copy)]
pub enum Finder {
    /// Each directory directly in one of `within` that holds an entry named one of `markers`.
    Holding {
        within: &'static [&'static str],
        markers: &'static [&'static str],
    },
    /// Each entry directly in one of `within` whose name, in lowercase and beginning with a dot,
    /// contains one of `words` or ends with one of `suffixes`.
    Named {
        within: &'static [&'static str],
        words: &'static [&'static str],
        suffixes: &'static [&'static str],
    },
}

impl Finder {
    fn within(&self) -> &'static [&'static str] {
        match self {
            Finder::Holding { within, .. } | Finder::Named { within, .. } => within,
        }
    }

    /// Whether `name`, an entry of a listed directory (`dir` its descriptor), is a store.
    fn finds(&self, dir: &impl AsFd, name: &OsStr, is_dir: bool) -> bool {
        match self {
            Finder::Holding { markers, .. } => {
                is_dir
                    && markers.iter().any(|marker| {
                        let path = Path::new(name).join(marker);
                        fstatat(dir, &path, AtFlags::AT_SYMLINK_NOFOLLOW).is_ok()
                    })
            }
            Finder::Named {
                words, suffixes, ..
            } => {
                let lower = name.to_string_lossy().to_lowercase();
                lower.starts_with('.')
                    && (words.iter().any(|w| lower.contains(w))
                        || suffixes.iter().any(|s| lower.ends_with(s)))
            }
        }
    }
}

/// The stores `finders` find beneath `home` (`~` of their `within`), each directory listed once
/// for all finders that look in it; `xdg` maps `~/.config` and `~/.local/share` to where the
/// caller's variables move them, listed besides. Absolute paths; a directory that cannot be
/// listed finds nothing.
pub(super) fn stores(home: &Path, finders: &[Finder], xdg: &[(&str, PathBuf)]) -> Vec<PathBuf> {
    let mut by_dir: HashMap<PathBuf, Vec<Finder>> = HashMap::new();
    for finder in finders {
        for within in finder.within() {
            let rest = within.strip_prefix('~').unwrap_or(within);
            let rest = rest.trim_start_matches('/');
            let mut dirs = vec![home.join(rest)];
            dirs.extend(
                xdg.iter()
                    .filter(|(default, _)| default.trim_end_matches('/') == *within)
                    .map(|(_, moved)| moved.clone()),
            );
            for dir in dirs {
                by_dir.entry(dir).or_default().push(*finder);
            }
        }
    }
    let mut out = Vec::new();
    for (dir, finders) in by_dir {
        let Ok(listed) = fs::read_dir(&dir) else {
            continue;
        };
        let Ok(handle) = fs::File::open(&dir) else {
            continue;
        };
        for entry in listed.flatten() {
            let name = entry.file_name();
            // A rule is text: a name that is not UTF-8 could not be one.
            if name.to_str().is_none() {
                continue;
            }
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if finders.iter().any(|f| f.finds(&handle, &name, is_dir)) {
                out.push(dir.join(&name));
            }
        }
    }
    out.sort();
    out
}
