//! What no profile reads or passes on, in one place: the credential stores of the usual tools
//! (carved out of every read rule, `plan::carve`) and the names of variables that carry secrets
//! (removed from every job's environment). Every profile starts from these; a profile adds paths
//! (`deny_read`) and patterns (`remove_matching`), and re-allows exactly what its agent needs: a
//! read rule naming a file inside a store, a variable under `keep`. Paths are as the tools'
//! documentation gives them; one that does not exist on this machine is skipped.
//! The families are here, their stores in keys.rs (machines and services), apps.rs (browsers,
//! chat, editors, LLM tools, the agents' own state) and histories.rs; those found by what they
//! are in found.rs; those the caller's variables name in named.rs; the secret variables' names in
//! variables.rs. A list of names cannot be complete: `strict` reads nothing of the home directory
//! that it does not name.

mod apps;
mod found;
mod histories;
mod keys;
mod named;
#[cfg(test)]
mod tests;
mod variables;

pub use found::Finder;
pub use variables::SECRET_VARIABLES;

/// A family of credential stores: what they are, where (by name, under `~`: the caller's `HOME`,
/// and the user's XDG directories there), and how its other stores are found.
#[derive(Debug)]
pub struct Family {
    /// Its name, as `policy show` lists it.
    pub name: &'static str,
    /// What it holds, in a few words.
    pub what: &'static str,
    /// Its stores by name.
    pub paths: &'static [&'static str],
    /// How its other stores are found (found.rs), if they are.
    pub found: &'static [Finder],
    /// Each agent's profile writes its own store of this family, so reads it.
    pub login: bool,
}

/// Every family, in the order `policy show` lists them.
pub const FAMILIES: &[&Family] = &[
    &keys::SHELLS,
    &keys::CLOUDS,
    &keys::CONTAINERS,
    &keys::FORGES,
    &keys::PACKAGES,
    &keys::SERVICES,
    &keys::SECRETS,
    &keys::DATABASES,
    &apps::BROWSERS,
    &apps::CHAT,
    &apps::EDITORS,
    &apps::LLM_TOOLS,
    &apps::AGENTS,
    &histories::HISTORIES,
];

/// Every family's stores by name (`~/…`), the agents' own state included.
pub fn named_stores() -> impl Iterator<Item = &'static str> {
    FAMILIES.iter().flat_map(|f| f.paths.iter().copied())
}

/// The agents' own state among them (`AGENTS`): stores like the others, but each agent's profile
/// writes (so reads) its own.
pub fn agents_state() -> impl Iterator<Item = &'static str> {
    FAMILIES
        .iter()
        .filter(|f| f.login)
        .flat_map(|f| f.paths.iter().copied())
}

/// Credential stores outside the home directory: Kerberos' default ticket cache, the secrets a
/// container or a Kubernetes pod is given (its service account's token), and the container
/// registries' login kept in the runtime directory.
pub const SYSTEM_STORES: &[&str] = &[
    "/tmp/krb5cc_$UID",
    "/run/secrets",
    "/var/run/secrets",
    // Podman's and Buildah's login (`podman login` keeps it in the runtime directory).
    "/run/user/$UID/containers/auth.json",
];

/// Every family's stores as rules: those named, under `~` (the caller's `HOME`), and under the
/// user's home directory of the password database too when `HOME` names another place (`sudo -E`,
/// a test's home), so that a changed `HOME` never opens the real stores; the XDG directories'
/// stores where the XDG variables move them; those found by what they are (found.rs), in both
/// homes; `SYSTEM_STORES`; and the stores the caller's variables name (named.rs). Each once.
pub fn stores() -> Vec<String> {
    let var = |name: &str| std::env::var_os(name);
    let named: Vec<&str> = named_stores().collect();
    let mut out = in_homes(&named);
    out.extend(SYSTEM_STORES.iter().map(|s| s.to_string()));
    out.extend(named::stores(&var, named::Kind::Every));
    out.extend(found_stores(&var));
    let mut seen = std::collections::HashSet::new();
    out.retain(|s| seen.insert(s.clone()));
    out
}

/// The stores the families' finders find, in the caller's home (as `~/…`) and the real one.
fn found_stores(var: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<String> {
    let finders: Vec<Finder> = FAMILIES
        .iter()
        .flat_map(|f| f.found.iter().copied())
        .collect();
    let xdg = named::moved_xdg(var);
    let home = var("HOME").map(std::path::PathBuf::from);
    let mut out = Vec::new();
    if let Some(home) = home.as_ref().filter(|h| h.is_absolute()) {
        for found in found::stores(home, &finders, &xdg) {
            out.push(match found.strip_prefix(home) {
                Ok(rest) => format!("~/{}", literal(&rest.display().to_string())),
                Err(_) => literal(&found.display().to_string()),
            });
        }
    }
    if let Some(real) = real_home().filter(|real| Some(real) != home.as_ref()) {
        out.extend(
            found::stores(&real, &finders, &[])
                .iter()
                .map(|found| literal(&found.display().to_string())),
        );
    }
    out
}

/// Why `stores()` cannot be made here, if it cannot: a variable it reads, or the home directory
/// of the password database, that is not UTF-8 (a rule is text; the store it names would be left
/// open).
pub fn unusable() -> Option<String> {
    let var = |name: &str| std::env::var_os(name);
    if let Some(name) = named::not_utf8(&var) {
        return Some(format!(
            "${name} is not UTF-8, so the credential store it names cannot be denied; set it to a \
             UTF-8 path or unset it"
        ));
    }
    let real = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()?;
    real.dir.to_str().is_none().then(|| {
        format!(
            "the home directory {} is not UTF-8, so its credential stores cannot be denied",
            real.dir.display()
        )
    })
}

/// The agents' own state among `stores()`, as rules.
#[cfg(test)]
pub(crate) fn logins() -> Vec<String> {
    let var = |name: &str| std::env::var_os(name);
    let agents: Vec<&str> = agents_state().collect();
    let mut out = in_homes(&agents);
    out.extend(named::stores(&var, named::Kind::Logins));
    out
}

/// `path` as a rule that expands to it (plan/expand.rs): each `$` doubled. For a path the
/// machine gave (a variable's value, a home directory), never for one of the lists above, whose
/// `$UID` is to be expanded.
fn literal(path: &str) -> String {
    path.replace('$', "$$")
}

/// `list` under `~`, and under the password database's home directory when `HOME` is another.
fn in_homes(list: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    if let Some(real) = real_home().filter(|real| Some(real) != home.as_ref()) {
        out.extend(
            list.iter()
                .filter_map(|s| s.strip_prefix("~/"))
                .map(|rest| literal(&real.join(rest).display().to_string())),
        );
    }
    out
}

/// The user's home directory of the password database.
fn real_home() -> Option<std::path::PathBuf> {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|user| user.dir)
}
