//! An agent's own trust of a folder, carried from the project to the job's worktree: where the user
//! has trusted the project in the agent's own state, the worktree is trusted in what the job's
//! agent reads, so its trust dialog does not come up for every new worktree. Claude Code's
//! project table in the job's configuration (`$CLAUDE_CONFIG_DIR/.claude.json`, the profile's
//! copy; written as Claude Code writes it, under its lock), Codex's trust table (a `-c projects=`
//! for the run: Codex's `config.toml` is the user's own, not the job's), Gemini CLI's trusted
//! folders (a copy in the job's TMPDIR that `GEMINI_CLI_TRUSTED_FOLDERS_PATH` names). Never trusts
//! what the user has not, never writes the user's own files, and an agent's state that cannot be
//! read trusts nothing.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::Known;

/// The largest agent state file read.
const MAX: u64 = 64 << 20;
/// How long to wait for Claude Code's lock on its configuration, and when a lock is stale (its
/// lock library's own default).
const LOCK_WAIT: Duration = Duration::from_secs(5);
const LOCK_STALE: Duration = Duration::from_secs(10);

/// Where a job runs, and the environments that say where the agent keeps its state.
pub struct Places<'a> {
    /// The project's top level (and the caller's checkout of it): what the user trusted.
    pub project: &'a [&'a Path],
    pub worktree: &'a Path,
    /// The job's TMPDIR, where a copy made for the job lives.
    pub tmpdir: &'a Path,
    /// The caller's environment (where the agent keeps the user's state outside isolate) and the
    /// job's (where it keeps it in the job).
    pub caller: &'a [(OsString, OsString)],
    pub job: &'a [(OsString, OsString)],
}

/// What trusting the worktree takes for the job: arguments after the agent's first word,
/// variables, the start line's note (or why it could not be done), and what to take back when the
/// job ends.
#[derive(Debug, Default)]
pub struct Trust {
    pub args: Vec<String>,
    pub env: Vec<(String, OsString)>,
    pub note: Option<String>,
    pub withdraw: Option<Withdraw>,
}

/// A trust written into the agent's state, taken back when the job ends: a later session in the
/// worktree (`--resume`) holds what the job wrote, which the user has not trusted.
#[derive(Debug)]
pub struct Withdraw {
    /// Claude Code's configuration in the job, and the worktree's key in its project table.
    file: PathBuf,
    worktree: String,
}

impl Withdraw {
    /// Takes the trust back (the rest of what the agent keeps of the folder stays); a failure is
    /// said, never fatal.
    pub fn run(self) -> Option<String> {
        let taken = under_lock(&self.file, |config: &mut Value| {
            let entry = config
                .get_mut("projects")
                .and_then(|projects| projects.get_mut(&self.worktree))
                .and_then(Value::as_object_mut);
            if let Some(entry) = entry {
                entry.remove("hasTrustDialogAccepted");
            }
            true
        });
        taken.err().map(|e| {
            format!(
                "could not take back the worktree's trust in {}: {e}",
                self.file.display()
            )
        })
    }
}

/// The worktree trusted for `agent` where the user trusted the project.
pub fn carry(agent: &Known, places: &Places<'_>) -> Trust {
    match agent.profile {
        "claude-code" => claude(places),
        "codex" => codex(places),
        "gemini" => gemini(places),
        _ => Trust::default(),
    }
}

fn var<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsStr> {
    env.iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_os_str())
        .filter(|v| !v.is_empty())
}

fn home(env: &[(OsString, OsString)]) -> Option<PathBuf> {
    var(env, "HOME").map(PathBuf::from)
}

fn read_json(path: &Path) -> Option<Value> {
    let text = crate::textfile::read_at_most(path, MAX).ok()?;
    serde_json::from_str(&text).ok()
}

fn trusted_note(agent: &str, file: &Path) -> Option<String> {
    Some(format!(
        "{agent} trusts the worktree, as you trusted the project in {}",
        file.display()
    ))
}

/// The project and every directory above it (Claude Code trusts a folder under a trusted one).
fn with_ancestors<'a>(project: &'a [&'a Path]) -> impl Iterator<Item = &'a Path> {
    project.iter().flat_map(|p| p.ancestors())
}

/// Claude Code: `projects[<dir>].hasTrustDialogAccepted` for the project or a directory above it,
/// in the user's configuration or the job's; then the same for the worktree in the job's.
fn claude(places: &Places<'_>) -> Trust {
    let user = match var(places.caller, "CLAUDE_CONFIG_DIR") {
        Some(dir) => Path::new(dir).join(".claude.json"),
        None => match home(places.caller) {
            Some(home) => home.join(".claude.json"),
            None => return Trust::default(),
        },
    };
    let Some(job_dir) = var(places.job, "CLAUDE_CONFIG_DIR") else {
        return Trust::default();
    };
    let job = Path::new(job_dir).join(".claude.json");
    // The job's file is the one it writes: never the user's own `~/.claude.json`.
    if home(places.caller).is_some_and(|h| job == h.join(".claude.json")) {
        return Trust::default();
    }
    let accepted = |config: &Value, dir: &Path| {
        config["projects"][dir.to_string_lossy().as_ref()]["hasTrustDialogAccepted"] == true
    };
    let trusted_in = [&user, &job].into_iter().find(|file| {
        read_json(file)
            .is_some_and(|config| with_ancestors(places.project).any(|dir| accepted(&config, dir)))
    });
    let Some(trusted_in) = trusted_in else {
        return Trust::default();
    };
    if !fs::symlink_metadata(&job).is_ok_and(|m| m.is_file()) {
        return Trust::default();
    }
    let worktree = places.worktree.to_string_lossy().into_owned();
    let key = worktree.clone();
    let written = under_lock(&job, |config: &mut Value| {
        let entry = child(config, "projects").and_then(|projects| child(projects, &worktree));
        match entry.and_then(Value::as_object_mut) {
            Some(entry) => {
                entry.insert("hasTrustDialogAccepted".into(), Value::Bool(true));
                true
            }
            None => false,
        }
    });
    match written {
        Ok(()) => Trust {
            note: trusted_note("Claude Code", trusted_in),
            withdraw: Some(Withdraw {
                file: job,
                worktree: key,
            }),
            ..Trust::default()
        },
        Err(e) => Trust {
            note: Some(format!(
                "could not trust the worktree in {} ({e}): Claude Code asks once",
                job.display()
            )),
            ..Trust::default()
        },
    }
}

/// `value[key]` of the object `value`, an empty object made there where it is missing; `None` where
/// `value` is no object.
fn child<'a>(value: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    let map = value.as_object_mut()?;
    Some(
        map.entry(key.to_string())
            .or_insert_with(|| Value::Object(Default::default())),
    )
}

/// `change` applied to the JSON of `path` as Claude Code writes it: under its lock (a directory
/// `<file>.lock` beside it), read whole, written to a new file beside it and renamed over it.
fn under_lock(path: &Path, change: impl FnOnce(&mut Value) -> bool) -> std::io::Result<()> {
    let lock = PathBuf::from(format!("{}.lock", path.display()));
    let start = SystemTime::now();
    loop {
        match fs::create_dir(&lock) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let stale = fs::metadata(&lock)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|at| at.elapsed().ok())
                    .is_some_and(|age| age > LOCK_STALE);
                if stale {
                    let _ = fs::remove_dir(&lock);
                    continue;
                }
                if start.elapsed().unwrap_or_default() > LOCK_WAIT {
                    return Err(std::io::Error::other("its lock is held"));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    }
    let done = rewrite(path, change);
    let _ = fs::remove_dir(&lock);
    done
}

fn rewrite(path: &Path, change: impl FnOnce(&mut Value) -> bool) -> std::io::Result<()> {
    let text = crate::textfile::read_at_most(path, MAX)?;
    let mut config: Value = serde_json::from_str(&text)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    if !change(&mut config) {
        return Err(std::io::Error::other("its projects are not a table"));
    }
    let mut bytes = serde_json::to_vec_pretty(&config)?;
    bytes.push(b'\n');
    let dir = path.parent().unwrap_or(Path::new("/"));
    let mut tmp = tempfile::Builder::new()
        .prefix(".isolate-trust-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .tempfile_in(dir)?;
    tmp.write_all(&bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}

/// Codex: `projects."<dir>".trust_level = "trusted"` for the project in `$CODEX_HOME/config.toml`;
/// the worktree then by a `-c` for the run.
fn codex(places: &Places<'_>) -> Trust {
    let dir = match var(places.job, "CODEX_HOME") {
        Some(dir) => PathBuf::from(dir),
        None => match home(places.job) {
            Some(home) => home.join(".codex"),
            None => return Trust::default(),
        },
    };
    let file = dir.join("config.toml");
    let Some(config) = crate::textfile::read_at_most(&file, MAX)
        .ok()
        .and_then(|text| toml::from_str::<toml::Table>(&text).ok())
    else {
        return Trust::default();
    };
    let trusted = places.project.iter().any(|dir| {
        config
            .get("projects")
            .and_then(|p| p.get(dir.to_string_lossy().as_ref()))
            .and_then(|p| p.get("trust_level"))
            .and_then(toml::Value::as_str)
            == Some("trusted")
    });
    if !trusted {
        return Trust::default();
    }
    let worktree = toml_string(&places.worktree.to_string_lossy());
    Trust {
        args: vec![
            "-c".into(),
            format!("projects={{{worktree}={{trust_level=\"trusted\"}}}}"),
        ],
        note: trusted_note("Codex", &file),
        ..Trust::default()
    }
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Gemini CLI: the project trusted by the user's trusted folders (the longest rule that holds it
/// decides, as Gemini CLI decides); the job then reads a copy with the worktree trusted too.
fn gemini(places: &Places<'_>) -> Trust {
    let file = match var(places.caller, "GEMINI_CLI_TRUSTED_FOLDERS_PATH") {
        Some(path) => PathBuf::from(path),
        None => match home(places.caller) {
            Some(home) => home.join(".gemini/trustedFolders.json"),
            None => return Trust::default(),
        },
    };
    let Some(Value::Object(mut rules)) = read_json(&file) else {
        return Trust::default();
    };
    if !places
        .project
        .iter()
        .any(|dir| gemini_trusts(&rules, dir) == Some(true))
    {
        return Trust::default();
    }
    rules.insert(
        places.worktree.to_string_lossy().into_owned(),
        Value::String("TRUST_FOLDER".into()),
    );
    let copy = places.tmpdir.join("gemini-trusted-folders.json");
    let written = serde_json::to_vec_pretty(&Value::Object(rules))
        .map_err(std::io::Error::from)
        .and_then(|bytes| crate::sys::atomic::write(&copy, &bytes).map_err(std::io::Error::other));
    match written {
        Ok(()) => Trust {
            env: vec![("GEMINI_CLI_TRUSTED_FOLDERS_PATH".into(), copy.into())],
            note: trusted_note("Gemini CLI", &file),
            ..Trust::default()
        },
        Err(e) => Trust {
            note: Some(format!(
                "could not trust the worktree for Gemini CLI ({e}): it asks once"
            )),
            ..Trust::default()
        },
    }
}

/// What Gemini CLI's trusted folders `rules` say of `dir`: the rule whose path is longest among
/// those that hold it decides (`TRUST_PARENT`: the folder above the rule's).
fn gemini_trusts(rules: &serde_json::Map<String, Value>, dir: &Path) -> Option<bool> {
    let real = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let dir = real(dir);
    let mut best: Option<(usize, bool)> = None;
    for (path, level) in rules {
        let (holds, trusts) = match level.as_str() {
            Some("TRUST_FOLDER") => (real(Path::new(path)), true),
            Some("TRUST_PARENT") => (
                real(Path::new(path).parent().unwrap_or(Path::new(path))),
                true,
            ),
            Some("DO_NOT_TRUST") => (real(Path::new(path)), false),
            _ => continue,
        };
        if dir.starts_with(&holds) && !best.is_some_and(|(len, _)| path.len() <= len) {
            best = Some((path.len(), trusts));
        }
    }
    best.map(|(_, trusts)| trusts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_longest_rule_that_holds_a_folder_decides_as_gemini_cli_decides() {
        let rules = json!({
            "/src": "TRUST_FOLDER",
            "/src/secret": "DO_NOT_TRUST",
            "/work/app/file": "TRUST_PARENT",
        });
        let rules = rules.as_object().unwrap();
        assert_eq!(gemini_trusts(rules, Path::new("/src/app")), Some(true));
        assert_eq!(
            gemini_trusts(rules, Path::new("/src/secret/x")),
            Some(false)
        );
        assert_eq!(gemini_trusts(rules, Path::new("/work/app")), Some(true));
        assert_eq!(gemini_trusts(rules, Path::new("/srcx")), None);
    }

    #[test]
    fn a_worktree_path_is_one_toml_string_whatever_it_holds() {
        assert_eq!(toml_string("/a/b"), "\"/a/b\"");
        assert_eq!(toml_string("/a\"b\\c\n"), "\"/a\\\"b\\\\c\\u000A\"");
    }
}
