//! Starting points fetched from the project's remote (docs/worktrees.md, "Starting points"): a pull
//! or merge request's head (`--pr`), and the remote's default branch (`--base fresh`). Every git here
//! runs in the project with the hygiene of every project-side git (no hooks, no prompts, a time
//! limit); the user's credentials are whatever their git already has. A fetched commit is written
//! to no ref of the project's: the job's base pin holds it, and as no ref of the user's reaches it,
//! the worktree's checkout treats it as untrusted (its filter drivers run sandboxed).
//!
//! The remote is not trusted either: every object it sends is checked as git's `transfer.fsckObjects`
//! checks it, in a quarantine beside the project's store that it leaves only once the whole fetch
//! succeeded (quarantine.rs), and the fetch is bounded like an import (bounds.rs: the memory of
//! each git, the size of what it writes, the time limit). A fetch that fails or goes over a bound
//! leaves nothing in the project.

use super::bounds::{bounds, exceeded, hold, memory_config};
use super::hygiene::command;
use super::project::Project;
use super::quarantine::Quarantine;
use super::run::{checked, collect_output, run, try_run};
use crate::error::{Error, Result};

/// The remote a starting point is fetched from.
pub const REMOTE: &str = "origin";

/// A pull or merge request, as the user named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    pub number: u64,
    /// Which forge's layout the name said; `None` for a bare number (both are tried).
    pub forge: Option<Forge>,
}

/// Where a forge keeps the heads of its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forge {
    /// `refs/pull/N/head`.
    GitHub,
    /// `refs/merge-requests/N/head`.
    GitLab,
}

impl Forge {
    pub fn head_ref(self, number: u64) -> String {
        match self {
            Forge::GitHub => format!("refs/pull/{number}/head"),
            Forge::GitLab => format!("refs/merge-requests/{number}/head"),
        }
    }
}

impl std::str::FromStr for PullRequest {
    type Err = Error;

    /// `7`, `#7`, `https://github.com/OWNER/REPO/pull/7` or
    /// `https://gitlab.com/GROUP/PROJECT/-/merge_requests/8` (any host; `/files` and the like after
    /// the number are allowed).
    fn from_str(text: &str) -> Result<PullRequest> {
        let bad = || {
            Error::Usage(format!(
                "--pr {text:?}: expected a number, #NUMBER, or a GitHub pull request or GitLab merge \
                 request URL"
            ))
        };
        let number = |s: &str| s.parse::<u64>().ok().filter(|n| *n > 0);
        let bare = text.strip_prefix('#').unwrap_or(text);
        if let Some(n) = number(bare) {
            return Ok(PullRequest {
                number: n,
                forge: None,
            });
        }
        if !text.starts_with("https://") && !text.starts_with("http://") {
            return Err(bad());
        }
        let parts: Vec<&str> = text.split(['/', '?', '#']).collect();
        for (i, part) in parts.iter().enumerate() {
            let forge = match *part {
                "pull" => Forge::GitHub,
                "merge_requests" => Forge::GitLab,
                _ => continue,
            };
            if let Some(n) = parts.get(i + 1).and_then(|s| number(s)) {
                return Ok(PullRequest {
                    number: n,
                    forge: Some(forge),
                });
            }
        }
        Err(bad())
    }
}

/// A starting point fetched: its commit, and what it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub commit: String,
    /// The remote's ref it was (`refs/pull/7/head`, `refs/heads/main`).
    pub source: String,
}

/// Fetches the head of `pr` from the project's remote.
pub fn fetch_pull_request(project: &Project, pr: &PullRequest) -> Result<Fetched> {
    require_remote(project)?;
    let candidates: Vec<String> = match pr.forge {
        Some(forge) => vec![forge.head_ref(pr.number)],
        None => [Forge::GitHub, Forge::GitLab]
            .iter()
            .map(|f| f.head_ref(pr.number))
            .collect(),
    };
    let mut args = vec!["ls-remote", "--end-of-options", REMOTE];
    args.extend(candidates.iter().map(String::as_str));
    let listed = run(&project.top, &args).map_err(not_reached)?;
    let found = listed
        .text()
        .lines()
        .filter_map(|line| line.split_once('\t').map(|(_, name)| name.to_string()))
        .find(|name| candidates.contains(name));
    let Some(source) = found else {
        return Err(Error::Usage(format!(
            "--pr {}: {REMOTE} has no such request ({})",
            pr.number,
            candidates.join(" or ")
        )));
    };
    fetch(project, source)
}

/// Fetches the remote's default branch (what its HEAD names).
pub fn fetch_default_branch(project: &Project) -> Result<Fetched> {
    require_remote(project)?;
    let out = run(
        &project.top,
        ["ls-remote", "--symref", "--end-of-options", REMOTE, "HEAD"],
    )
    .map_err(not_reached)?;
    let branch = out
        .text()
        .lines()
        .find_map(|line| {
            let rest = line.strip_prefix("ref: ")?;
            let (name, head) = rest.split_once('\t')?;
            (head == "HEAD").then(|| name.to_string())
        })
        .ok_or_else(|| {
            Error::Usage(format!(
                "--base fresh: {REMOTE} names no default branch (its HEAD is not a symbolic ref)"
            ))
        })?;
    if !is_branch_name(&branch) {
        return Err(Error::Usage(format!(
            "--base fresh: {REMOTE} names its default branch {branch:?}, which is not a branch name"
        )));
    }
    fetch(project, branch)
}

/// Whether `name`, which the remote chose, is a branch's full name and nothing else: a name such
/// as `+refs/heads/x:refs/heads/main` given to `git fetch` would be a refspec that moves the
/// project's own refs (`:`, `+`, `^`, `*` and the rest are not in a valid ref name).
fn is_branch_name(name: &str) -> bool {
    name.starts_with("refs/heads/")
        && name.len() > "refs/heads/".len()
        && gix::validate::reference::name(name.as_bytes().into()).is_ok()
}

/// The `-c` options of a fetch: every object checked as `git fsck` would (a remote's malformed tree
/// or commit refused, whatever the user's `fetch.fsckObjects` says), always into a pack that
/// `index-pack --strict` checks (never exploded loose by `unpack-objects`), and no automatic
/// maintenance, which would work on the quarantine.
const CHECKED: [&str; 12] = [
    "-c",
    "fetch.fsckObjects=true",
    "-c",
    "transfer.fsckObjects=true",
    "-c",
    "fetch.unpackLimit=1",
    "-c",
    "transfer.unpackLimit=1",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
];

/// `git fetch REMOTE SOURCE` into FETCH_HEAD only (no ref of the project moves), its objects
/// checked and bounded in a quarantine and moved into the project's store only once it succeeded;
/// and the commit.
fn fetch(project: &Project, source: String) -> Result<Fetched> {
    let bounds = bounds()?;
    let quarantine = Quarantine::new(&project.objects)?;
    let mut cmd = command(&project.top);
    cmd.args(CHECKED).args(memory_config(bounds.memory)).args([
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-recurse-submodules",
        "--no-write-commit-graph",
        "--no-auto-maintenance",
        // No remote-tracking ref is updated on the side (the configured refspecs' map): a ref
        // of the project's reaching the commit would vouch for it (its filters would run).
        "--refmap=",
        "--end-of-options",
        REMOTE,
        &source,
    ]);
    cmd.env("GIT_OBJECT_DIRECTORY", quarantine.path())
        .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &project.objects);
    hold(&mut cmd, bounds, true);
    let out = collect_output(&mut cmd)?;
    if !out.status.success() {
        if let Some(bound) = exceeded(&String::from_utf8_lossy(&out.stderr)) {
            let (limit, var) = bounds.of(bound);
            return Err(Error::FetchOverBound {
                what: format!("{REMOTE} {source}"),
                bound,
                limit,
                var,
            });
        }
    }
    let refused = String::from_utf8_lossy(&out.stderr).contains("fsck error");
    checked(&cmd, out).map_err(|e| match refused {
        true => Error::Usage(format!(
            "{REMOTE} {source}: the remote sent objects git refuses to store (checked as \
             transfer.fsckObjects checks them); nothing of it entered the project: {e}"
        )),
        false => not_reached(e),
    })?;
    quarantine.migrate()?;
    let commit = project
        .resolve_commit("FETCH_HEAD")?
        .ok_or_else(|| Error::Usage(format!("{REMOTE} {source}: the fetch brought no commit")))?;
    Ok(Fetched { commit, source })
}

fn require_remote(project: &Project) -> Result<()> {
    let out = try_run(&project.top, ["remote", "get-url", "--", REMOTE])?;
    match out.status.success() {
        true => Ok(()),
        false => Err(Error::Usage(format!(
            "{} has no remote {REMOTE} to fetch from",
            project.top.display()
        ))),
    }
}

/// A git failure talking to the remote, said as such (offline, no access).
fn not_reached(e: Error) -> Error {
    Error::Usage(format!("cannot reach {REMOTE}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_requests_are_named_by_number_or_url() {
        let pr = |s: &str| s.parse::<PullRequest>();
        assert_eq!(
            pr("7").unwrap(),
            PullRequest {
                number: 7,
                forge: None
            }
        );
        assert_eq!(pr("#12").unwrap().number, 12);
        let gh = pr("https://github.com/acme/app/pull/7/files").unwrap();
        assert_eq!(
            gh,
            PullRequest {
                number: 7,
                forge: Some(Forge::GitHub)
            }
        );
        let gl = pr("https://gitlab.example.com/g/sub/p/-/merge_requests/8").unwrap();
        assert_eq!(
            gl,
            PullRequest {
                number: 8,
                forge: Some(Forge::GitLab)
            }
        );
        for name in ["refs/heads/main", "refs/heads/feature/x+y"] {
            assert!(is_branch_name(name), "{name}");
        }
        for name in [
            "+refs/heads/x:refs/heads/main",
            "refs/heads/x:refs/heads/main",
            "^refs/heads/main",
            "refs/heads/*",
            "refs/heads/",
            "refs/tags/v1",
            "refs/heads/a..b",
            "refs/heads/a b",
            "HEAD",
            "--upload-pack=x",
        ] {
            assert!(!is_branch_name(name), "{name}");
        }
        for bad in [
            "",
            "#",
            "0",
            "x7",
            "https://github.com/acme/app",
            "ftp://h/pull/7",
            "-1",
        ] {
            assert!(pr(bad).is_err(), "{bad}");
        }
    }
}
