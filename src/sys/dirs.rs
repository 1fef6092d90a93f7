//! Where the user's files live, by the XDG base directory rules: a variable that is set and not
//! empty, else the default under `$HOME`. The one lookup of `XDG_CONFIG_HOME`, `XDG_STATE_HOME`
//! and `HOME` in isolate.

use std::path::PathBuf;

/// A variable's value as a path, when it is set and not empty.
pub fn from_env(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `$XDG_CONFIG_HOME`, else `~/.config`.
pub fn config_home() -> Option<PathBuf> {
    from_env("XDG_CONFIG_HOME").or_else(|| from_env("HOME").map(|h| h.join(".config")))
}

/// `$XDG_STATE_HOME`, else `~/.local/state`.
pub fn state_home() -> Option<PathBuf> {
    from_env("XDG_STATE_HOME").or_else(|| from_env("HOME").map(|h| h.join(".local/state")))
}
