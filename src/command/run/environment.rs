//! CMD's environment (docs/cli.md, "What CMD gets").

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::git;
use crate::sandbox::policy::Loaded;

use super::options::RunOptions;
use super::prepared::Prepared;

/// What CMD's environment is made from: a job's (run), or a command run in a job (exec).
pub(super) struct Made<'a> {
    /// The job's policy, then the one that narrows it (`--resume --policy`).
    pub(super) policies: Vec<&'a Loaded>,
    pub(super) id: &'a str,
    pub(super) tmpdir: &'a Path,
    /// CMD's starting directory, which its `PWD` names.
    pub(super) cwd: &'a Path,
    /// The state directory of the jobs CMD starts (job/nest.rs), when it has one.
    pub(super) nested: Option<PathBuf>,
    /// Worktree, branch, base, project top.
    pub(super) worktree: Option<(&'a Path, &'a str, &'a str, &'a Path)>,
    /// The first of the job's ports.
    pub(super) port: u16,
    /// The URL of the job's network proxy, when its policy has a domain allowlist.
    pub(super) proxy: Option<&'a str>,
    /// `--env` (run only).
    pub(super) extra: &'a [(String, String)],
}

impl<'a> Made<'a> {
    /// A job's, from what `run` prepared.
    pub(super) fn of_job(
        options: &'a RunOptions,
        prepared: &'a Prepared,
        port: u16,
        proxy: Option<&'a str>,
        tmpdir: &'a Path,
    ) -> Made<'a> {
        Made {
            policies: std::iter::once(&prepared.policy)
                .chain(&prepared.narrowing)
                .collect(),
            id: prepared.id.as_str(),
            tmpdir,
            cwd: &prepared.cwd,
            nested: Some(crate::job::nest::state_of(&prepared.job_dir)),
            worktree: prepared.worktree.as_ref().map(|wt| {
                let c = &wt.created;
                (
                    c.path.as_path(),
                    c.branch.as_str(),
                    c.base.as_str(),
                    wt.project.top.as_path(),
                )
            }),
            port,
            proxy,
            extra: &options.env,
        }
    }
}

/// The caller's variables that a policy removes from CMD's environment as secrets (by a name
/// pattern, not kept) and `--env` does not give back, by name: the start line says so.
pub(super) fn removed_secrets(made: &Made<'_>) -> Vec<String> {
    let mut names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| !k.starts_with("ISOLATE_"))
        .filter(|k| {
            made.policies
                .iter()
                .any(|p| p.policy.environment.removes_secret(k))
        })
        .filter(|k| !made.extra.iter().any(|(given, _)| given == k))
        .collect();
    names.sort();
    names
}

/// The variables isolate sets for the job itself, which a policy's values may name (`$TMPDIR`).
fn own_variables(made: &Made<'_>) -> Vec<(&'static str, OsString)> {
    let mut own: Vec<(&'static str, OsString)> = vec![
        ("ISOLATE_JOB", made.id.into()),
        ("ISOLATE_PORT", made.port.to_string().into()),
        ("TMPDIR", made.tmpdir.into()),
        // The shell's idea of where it is: the job's directory, never the caller's checkout (a
        // tool that trusts `PWD` would read and write the user's files instead of the job's), as
        // a shell names it: no trailing slash, no `.` component.
        ("PWD", made.cwd.components().collect::<PathBuf>().into()),
    ];
    // State a tool insists on keeping somewhere, in the job's own TMPDIR: tmux's socket
    // directory, a runtime directory (Jupyter's kernels' connection files), Chromium's profile
    // (its default, under ~/.config, is a credential store).
    for (key, sub) in [
        ("TMUX_TMPDIR", ""),
        ("XDG_RUNTIME_DIR", "run"),
        ("JUPYTER_RUNTIME_DIR", "run/jupyter"),
        ("CHROME_CONFIG_HOME", "chrome"),
    ] {
        let dir = match sub {
            "" => made.tmpdir.to_path_buf(),
            sub => made.tmpdir.join(sub),
        };
        own.push((key, dir.into_os_string()));
    }
    if let Some(nested) = &made.nested {
        own.push((crate::job::nest::STATE_VAR, nested.into()));
    }
    if let Some((path, branch, base, repo)) = made.worktree {
        own.push(("ISOLATE_WORKTREE", path.into()));
        own.push(("ISOLATE_BRANCH", branch.into()));
        own.push(("ISOLATE_BASE", base.into()));
        own.push(("ISOLATE_REPO", repo.into()));
    }
    own
}

/// CMD's environment (docs/cli.md, "What CMD gets").
pub(super) fn environment(made: &Made<'_>) -> Vec<(OsString, OsString)> {
    // The job's policy, then the one that narrows it (`--resume --policy`): both remove, the second
    // sets last.
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| !k.to_string_lossy().starts_with("ISOLATE_") && k != "OLDPWD")
        .collect();
    let own = own_variables(made);
    let named: Vec<(&str, &std::ffi::OsStr)> =
        own.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
    for policy in &made.policies {
        policy.policy.environment.apply(&mut env, &named);
    }
    let mut set = |key: &str, value: OsString| {
        env.retain(|(k, _)| k != key);
        env.push((key.into(), value));
    };
    for (key, value) in own {
        set(key, value);
    }
    // git's automatic gc and maintenance off for the whole tree: `gc --auto` detaches a process that
    // would outlive the main process and be killed mid-way by the end-of-job stop.
    let count: usize = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    set(&format!("GIT_CONFIG_KEY_{count}"), "gc.auto".into());
    set(&format!("GIT_CONFIG_VALUE_{count}"), "0".into());
    set(
        &format!("GIT_CONFIG_KEY_{}", count + 1),
        "maintenance.auto".into(),
    );
    set(&format!("GIT_CONFIG_VALUE_{}", count + 1), "false".into());
    let mut count = count + 2;
    if let Some(url) = made.proxy {
        // Every tool's way of being told its proxy (curl, Python, Go and Rust clients read the
        // first ones, npm and pip their own, Node's fetch only with NODE_USE_ENV_PROXY, git its
        // http.proxy). Nothing bypasses it (NO_PROXY empty): it reaches the job's own ports too.
        for key in [
            "HTTPS_PROXY",
            "https_proxy",
            "HTTP_PROXY",
            "http_proxy",
            "ALL_PROXY",
            "all_proxy",
            "npm_config_proxy",
            "npm_config_https_proxy",
            "PIP_PROXY",
        ] {
            set(key, url.into());
        }
        set("NO_PROXY", "".into());
        set("no_proxy", "".into());
        set("NODE_USE_ENV_PROXY", "1".into());
        set(&format!("GIT_CONFIG_KEY_{count}"), "http.proxy".into());
        set(&format!("GIT_CONFIG_VALUE_{count}"), url.into());
        count += 1;
    }
    set("GIT_CONFIG_COUNT", count.to_string().into());
    if made.worktree.is_some() {
        // The job's git must find the job's repository, not one the caller pointed at.
        env.retain(|(k, _)| !git::LOCATION_VARS.iter().any(|r| k == r));
    }
    for (k, v) in made.extra {
        env.retain(|(key, _)| key != k.as_str());
        env.push((k.into(), v.into()));
    }
    env
}
