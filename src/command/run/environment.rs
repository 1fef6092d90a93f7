//! CMD's environment (docs/cli.md, "What CMD gets").

use std::ffi::OsString;

use crate::git;

use super::options::RunOptions;
use super::prepared::Prepared;

/// CMD's environment (docs/cli.md, "What CMD gets").
/// `proxy` is the URL of the job's network proxy, when its policy has a domain allowlist.
pub(super) fn environment(
    options: &RunOptions,
    prepared: &Prepared,
    port: u16,
    proxy: Option<&str>,
) -> Vec<(OsString, OsString)> {
    // The job's policy, then the one that narrows it (`--resume --policy`): both remove, the second
    // sets last.
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| !k.to_string_lossy().starts_with("ISOLATE_"))
        .collect();
    for policy in std::iter::once(&prepared.policy).chain(&prepared.narrowing) {
        policy.policy.environment.apply(&mut env);
    }
    let mut set = |key: &str, value: OsString| {
        env.retain(|(k, _)| k != key);
        env.push((key.into(), value));
    };
    set("ISOLATE_JOB", prepared.id.as_str().into());
    set("ISOLATE_PORT", port.to_string().into());
    set("TMPDIR", prepared.tmpdir.clone().into());
    if let Some(wt) = &prepared.worktree {
        set("ISOLATE_WORKTREE", wt.created.path.clone().into());
        set("ISOLATE_BRANCH", wt.created.branch.clone().into());
        set("ISOLATE_BASE", wt.created.base.clone().into());
        set("ISOLATE_REPO", wt.project.top.clone().into());
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
    if let Some(url) = proxy {
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
    if prepared.worktree.is_some() {
        // The job's git must find the job's repository, not one the caller pointed at.
        env.retain(|(k, _)| !git::LOCATION_VARS.iter().any(|r| k == r));
    }
    for (k, v) in &options.env {
        env.retain(|(key, _)| key != k.as_str());
        env.push((k.into(), v.into()));
    }
    env
}
