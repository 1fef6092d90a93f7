//! Credential stores the caller's variables name: where a tool keeps its keys when a variable
//! moves them (`GNUPGHOME`, `KUBECONFIG`, `DOCKER_CONFIG`, …), and the `~/.config`, `~/.local/share`
//! and `~/.cache` stores of `STORES` where `XDG_CONFIG_HOME`, `XDG_DATA_HOME` and `XDG_CACHE_HOME`
//! move those. The job is started with the same variables, so its tools look where these say.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::named_stores;

/// A variable and what beneath the path it holds is the store (`""`: the path itself). Each is
/// a tool's documented way to move its credentials; a variable holding a directory the tool
/// keeps much else in (`CARGO_HOME`, `HF_HOME`) names only the credential files in it.
const NAMED: &[(&str, &[&str])] = &[
    ("GNUPGHOME", &[""]),
    ("PASSWORD_STORE_DIR", &[""]),
    ("KUBECONFIG", &[""]),
    (
        "DOCKER_CONFIG",
        &[
            "config.json",
            "key.pem",
            "cert.pem",
            "ca.pem",
            "contexts/tls",
        ],
    ),
    ("DOCKER_CERT_PATH", &[""]),
    ("REGISTRY_AUTH_FILE", &[""]),
    ("XDG_RUNTIME_DIR", &["containers/auth.json"]),
    ("CLOUDSDK_CONFIG", &[""]),
    ("AZURE_CONFIG_DIR", &[""]),
    ("AWS_SHARED_CREDENTIALS_FILE", &[""]),
    ("AWS_CONFIG_FILE", &[""]),
    ("GOOGLE_APPLICATION_CREDENTIALS", &[""]),
    ("OCI_CLI_CONFIG_FILE", &[""]),
    ("BOTO_CONFIG", &[""]),
    ("RCLONE_CONFIG", &[""]),
    ("TF_CLI_CONFIG_FILE", &[""]),
    ("VAULT_CONFIG_PATH", &[""]),
    ("SOPS_AGE_KEY_FILE", &[""]),
    ("KAGGLE_CONFIG_DIR", &["kaggle.json"]),
    ("GH_CONFIG_DIR", &[""]),
    ("GLAB_CONFIG_DIR", &[""]),
    ("NETRC", &[""]),
    ("NPM_CONFIG_USERCONFIG", &[""]),
    ("npm_config_userconfig", &[""]),
    ("PIP_CONFIG_FILE", &[""]),
    ("CARGO_HOME", &["credentials", "credentials.toml"]),
    ("HF_HOME", &["token", "stored_tokens"]),
    ("HF_TOKEN_PATH", &[""]),
    ("PGPASSFILE", &[""]),
    ("MYSQL_HISTFILE", &[""]),
    ("PSQL_HISTORY", &[""]),
    ("NODE_REPL_HISTORY", &[""]),
    ("HISTFILE", &[""]),
    ("PYTHON_HISTORY", &[""]),
    ("LESSHISTFILE", &[""]),
    ("SQLITE_HISTORY", &[""]),
    ("REDISCLI_HISTFILE", &[""]),
    ("KRB5CCNAME", &[""]),
    ("KRB5_KTNAME", &[""]),
    ("KRB5_CLIENT_KTNAME", &[""]),
    ("AWS_WEB_IDENTITY_TOKEN_FILE", &[""]),
    ("ANSIBLE_VAULT_PASSWORD_FILE", &[""]),
    ("GRADLE_USER_HOME", &["gradle.properties"]),
    ("COMPOSER_HOME", &["auth.json"]),
    ("PULUMI_HOME", &["credentials.json"]),
    ("DBT_PROFILES_DIR", &["profiles.yml"]),
    ("BITWARDENCLI_APPDATA_DIR", &[""]),
    ("HUB_CONFIG", &[""]),
];

/// The agents' own state where their variables move it (an agent's profile writes its own
/// directory, which re-opens it to it alone, as with `~/.claude` and `~/.codex`).
const NAMED_LOGINS: &[(&str, &[&str])] = &[("CLAUDE_CONFIG_DIR", &[""]), ("CODEX_HOME", &[""])];

/// Which of the stores the variables name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Every one.
    Every,
    /// The agents' logins only.
    #[cfg(test)]
    Logins,
}

/// Where the XDG base directories move `STORES`' entries from: the variable and the default.
const XDG: &[(&str, &str)] = &[
    ("XDG_CONFIG_HOME", "~/.config/"),
    ("XDG_DATA_HOME", "~/.local/share/"),
    ("XDG_CACHE_HOME", "~/.cache/"),
];

/// The stores `var` names, as rules for absolute paths (a `$` in a value doubled, so that the
/// policy's expansion gives it back). A value that is relative, or is the home directory or above
/// it, names none; `KUBECONFIG` is a list, `KRB5CCNAME` may say its cache's type (`FILE:`,
/// `DIR:`). A value that is not UTF-8 cannot be a rule: `not_utf8` fails the run on it.
pub(super) fn stores(var: &dyn Fn(&str) -> Option<OsString>, kind: Kind) -> Vec<String> {
    let home = var("HOME").map(std::path::PathBuf::from);
    let usable = |value: &str| -> Option<String> {
        let value = value.trim_end_matches('/');
        let above_home = home.as_deref().is_some_and(|h| h.starts_with(value));
        (Path::new(value).is_absolute() && !above_home).then(|| super::literal(value))
    };
    let (named, stores): (&[_], Vec<&str>) = match kind {
        Kind::Every => (&[NAMED, NAMED_LOGINS], named_stores().collect()),
        #[cfg(test)]
        Kind::Logins => (&[NAMED_LOGINS], super::agents_state().collect()),
    };
    let mut out = Vec::new();
    for (name, parts) in named.iter().flat_map(|table| table.iter()) {
        let Some(value) = var(name).and_then(|v| v.into_string().ok()) else {
            continue;
        };
        let values: Vec<&str> = match *name {
            "KUBECONFIG" => value.split(':').collect(),
            // `DIR::/dir/tkt` names one cache of the collection `DIR:/dir`: the directory.
            "KRB5CCNAME" | "KRB5_KTNAME" | "KRB5_CLIENT_KTNAME" => {
                ["FILE:", "DIR::", "DIR:", "WRFILE:"]
                    .iter()
                    .find_map(|kind| value.strip_prefix(kind).map(|rest| (*kind, rest)))
                    .map(|(kind, rest)| match kind {
                        "DIR::" => Path::new(rest)
                            .parent()
                            .and_then(Path::to_str)
                            .unwrap_or(rest),
                        _ => rest,
                    })
                    .into_iter()
                    .chain(value.starts_with('/').then_some(value.as_str()))
                    .collect()
            }
            _ => vec![value.as_str()],
        };
        for base in values.into_iter().filter_map(usable) {
            out.extend(parts.iter().map(|part| match *part {
                "" => base.clone(),
                part => format!("{base}/{part}"),
            }));
        }
    }
    for (name, default) in XDG {
        let Some(base) = var(name).and_then(|v| v.into_string().ok()) else {
            continue;
        };
        let Some(base) = usable(&base) else {
            continue;
        };
        out.extend(
            stores
                .iter()
                .filter_map(|s| s.strip_prefix(default))
                .map(|rest| format!("{base}/{rest}")),
        );
    }
    out
}

/// The first variable `stores` reads (`HOME` among them) that is set to a value that is not
/// UTF-8: the store it names cannot be denied, so no sandboxed run may start with it.
pub(super) fn not_utf8(var: &dyn Fn(&str) -> Option<OsString>) -> Option<&'static str> {
    let names = NAMED.iter().chain(NAMED_LOGINS).map(|(name, _)| *name);
    std::iter::once("HOME")
        .chain(XDG.iter().map(|(name, _)| *name))
        .chain(names)
        .find(|name| var(name).is_some_and(|value| value.to_str().is_none()))
}

/// The XDG base directories the caller's variables move (`~/.config/` and where it is), usable as
/// store paths, for the finders (found.rs).
pub(super) fn moved_xdg(var: &dyn Fn(&str) -> Option<OsString>) -> Vec<(&'static str, PathBuf)> {
    let home = var("HOME").map(PathBuf::from);
    XDG.iter()
        .filter_map(|(name, default)| {
            let value = PathBuf::from(var(name)?.into_string().ok()?);
            let above_home = home.as_deref().is_some_and(|h| h.starts_with(&value));
            (value.is_absolute() && !above_home).then_some((*default, value))
        })
        .collect()
}
