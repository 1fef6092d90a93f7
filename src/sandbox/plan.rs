//! The plan: a policy resolved for one job. Every path is expanded (`~`, `$VAR`), made absolute and
//! canonical before it becomes a rule, so a symlink swapped in later cannot move a rule. The plan is
//! what the pre-exec helper enforces, and `Enforcement` is what the report says about it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::job::record::SandboxReport;
use crate::sandbox::policy::Loaded;
use crate::sandbox::probe::{self, MIN_ABI, SCOPES_ABI};

/// The Landlock rules for one job, in the form the helper needs after exec.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rules {
    /// The ABI to build the ruleset for (the kernel's, as probed by the supervisor).
    pub abi: u32,
    /// Readable and executable, with everything beneath.
    pub read: Vec<PathBuf>,
    /// Writable directories (every right but creating devices and device ioctls).
    pub write: Vec<PathBuf>,
    /// Single writable files (`/dev/null`).
    pub write_files: Vec<PathBuf>,
    pub scope_signals: bool,
    pub scope_abstract_unix: bool,
}

/// What the pre-exec helper does before it execs CMD.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    /// `None` with `--no-sandbox`.
    pub rules: Option<Rules>,
    /// Descriptor on which the helper reports why CMD could not be executed.
    pub status_fd: i32,
}

/// Builds the plan for a job that may write `writable` (its worktree and TMPDIR) and `allow_write`.
pub fn build(
    loaded: &Loaded,
    writable: &[PathBuf],
    allow_write: &[PathBuf],
    no_sandbox: bool,
) -> Result<(Option<Rules>, SandboxReport, Vec<String>)> {
    let abi = probe::landlock_abi();
    let mut notes = Vec::new();
    if no_sandbox {
        let report = SandboxReport {
            enforced: false,
            landlock_abi: abi,
            policy: loaded.name.clone(),
            gaps: vec!["no sandbox (--no-sandbox): nothing is enforced".to_string()],
        };
        return Ok((None, report, notes));
    }
    let abi = match abi {
        Some(abi) if abi >= MIN_ABI => abi,
        Some(abi) => {
            return Err(Error::SandboxUnavailable(format!(
                "write containment needs Landlock ABI {MIN_ABI} or newer; this kernel has ABI {abi}"
            )))
        }
        None => {
            return Err(Error::SandboxUnavailable(
                "Landlock is not enabled on this kernel".to_string(),
            ))
        }
    };
    let policy = &loaded.policy;
    let source = |message: String| Error::Policy {
        source_name: loaded.name.clone(),
        message,
    };

    let mut read = Vec::new();
    for raw in &policy.filesystem.read {
        match resolve(raw) {
            Ok(path) => read.push(path),
            Err(e) => notes.push(format!("read path {raw} skipped: {e}")),
        }
    }
    let mut write = Vec::new();
    for raw in &policy.filesystem.write {
        write.push(resolve(raw).map_err(|e| source(format!("write path {raw}: {e}")))?);
    }
    for path in allow_write {
        let shown = path.display();
        let resolved = std::fs::canonicalize(path)
            .map_err(|e| Error::Usage(format!("--allow-write {shown}: {e}")))?;
        write.push(resolved);
    }
    for path in writable {
        let resolved =
            std::fs::canonicalize(path).map_err(|e| Error::io("cannot resolve", path, e))?;
        write.push(resolved);
    }

    let scopes_available = abi >= SCOPES_ABI;
    let rules = Rules {
        abi,
        read,
        write,
        write_files: vec![PathBuf::from("/dev/null")],
        scope_signals: policy.scopes.signals && scopes_available,
        scope_abstract_unix: policy.scopes.abstract_unix_sockets && scopes_available,
    };
    let report = SandboxReport {
        enforced: true,
        landlock_abi: Some(abi),
        policy: loaded.name.clone(),
        gaps: gaps(&rules, loaded),
    };
    Ok((Some(rules), report, notes))
}

/// Every place these rules do not reach (spec/sandbox.md, "Gaps are reported, never hidden").
fn gaps(rules: &Rules, loaded: &Loaded) -> Vec<String> {
    let mut gaps = vec![
        "udp and path-named unix sockets are not restricted (Landlock does not cover them)"
            .to_string(),
        "file metadata changes (chmod, chown, timestamps, xattrs) are not restricted by Landlock"
            .to_string(),
        "tcp connect and bind are not restricted by this policy".to_string(),
    ];
    if rules.read.iter().any(|p| p == Path::new("/")) {
        gaps.push("reads are not restricted: the policy may read every file".to_string());
    }
    let policy = &loaded.policy;
    if policy.scopes.signals && !rules.scope_signals {
        gaps.push(format!(
            "signals to processes outside the sandbox are not scoped (needs Landlock ABI {SCOPES_ABI}, kernel has {})",
            rules.abi
        ));
    }
    if policy.scopes.abstract_unix_sockets && !rules.scope_abstract_unix {
        gaps.push(format!(
            "abstract unix sockets outside the sandbox are reachable (needs Landlock ABI {SCOPES_ABI}, kernel has {})",
            rules.abi
        ));
    }
    gaps
}

/// Expands `~` and `$VAR`/`${VAR}`, then makes the path absolute and canonical.
fn resolve(raw: &str) -> std::result::Result<PathBuf, String> {
    let expanded = expand(raw)?;
    if !Path::new(&expanded).is_absolute() {
        return Err(format!("{expanded} is not an absolute path"));
    }
    std::fs::canonicalize(&expanded).map_err(|e| format!("{expanded}: {e}"))
}

fn expand(raw: &str) -> std::result::Result<String, String> {
    let var = |name: &str| std::env::var(name).map_err(|_| format!("${name} is not set"));
    let mut out = match raw.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => var("HOME")? + rest,
        _ => raw.to_string(),
    };
    // Expanded values are not expanded again: `from` moves past each substitution.
    let mut from = 0;
    while let Some(start) = out[from..].find('$').map(|i| i + from) {
        let rest = &out[start + 1..];
        let (name, len) = match rest.strip_prefix('{') {
            Some(inner) => {
                let end = inner
                    .find('}')
                    .ok_or_else(|| format!("unclosed ${{ in {raw}"))?;
                (&inner[..end], end + 2)
            }
            None => {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                (&rest[..end], end)
            }
        };
        if name.is_empty() {
            return Err(format!("a lone $ in {raw}"));
        }
        let value = var(name)?;
        out.replace_range(start..start + 1 + len, &value);
        from = start + value.len();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expand_home_and_variables() {
        let home = std::env::var("HOME").unwrap();
        assert_eq!(expand("~/.claude").unwrap(), format!("{home}/.claude"));
        assert_eq!(expand("${HOME}/x").unwrap(), format!("{home}/x"));
        assert_eq!(expand("$HOME").unwrap(), home);
        assert!(expand("$ISOLATE_SURELY_UNSET_VAR/x").is_err());
        assert!(expand("/a/${B").is_err());
        assert_eq!(expand("~user/x").unwrap(), "~user/x");
    }
}
