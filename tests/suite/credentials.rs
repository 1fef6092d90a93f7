//! Credentials by family, not only by name: for each family of `sandbox::credentials`, secrets
//! planted where its tools keep them (by name, and where only what a store holds or how it is named
//! gives it away: a browser nobody listed, a REPL's history) are unreadable to a job under
//! `default` and every agent's profile, while what lies beside them stays readable; each agent's
//! own state is readable under its own profile only.

use std::fs;

use crate::support::*;

/// The profiles every family is denied under.
const PROFILES: [&str; 6] = [
    "default",
    "claude-code",
    "codex",
    "aider",
    "opencode",
    "gemini",
];

/// What lies beside the stores and must stay readable: an editor's configuration, a desktop
/// entry, a tool's dot-directory and an application's data that hold no profile.
const BESIDE: &[&str] = &[
    ".config/nvim/init.lua",
    ".local/share/applications/tool.desktop",
    ".toolrc",
    ".config/someapp/settings.json",
    ".local/share/someapp/data.db",
    ".vscode-server/bin/abc/product.json",
];

/// Plants `SECRET <path>` at each of `secrets` and `open <path>` at each of `BESIDE` in a fresh
/// home, then, under each of `PROFILES`, reads them all: no secret may be read (but those
/// `readable` names under its profile), everything beside must be.
fn unreadable(secrets: &[&str], readable: &[(&str, &[&str])]) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for path in secrets.iter().chain(BESIDE) {
        let file = env.home.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        let word = if BESIDE.contains(path) {
            "open"
        } else {
            "SECRET"
        };
        fs::write(&file, format!("{word} {path}\n")).unwrap();
    }
    let script: String = secrets
        .iter()
        .chain(BESIDE)
        .map(|p| format!("cat \"$HOME/{p}\" 2>/dev/null; "))
        .collect::<String>()
        + "echo done";
    for profile in PROFILES {
        let (out, _) = env.policy_job(&repo, &[], profile, &script);
        let text = stdout(&out);
        assert!(
            text.ends_with("done\n"),
            "{profile}: {text}{}",
            stderr(&out)
        );
        let own: &[&str] = readable
            .iter()
            .find(|(p, _)| *p == profile)
            .map_or(&[], |(_, paths)| paths);
        for path in secrets {
            let read = text.contains(&format!("SECRET {path}\n"));
            match own.contains(path) {
                true => assert!(read, "{profile} cannot read its own {path}: {text}"),
                false => assert!(!read, "{profile} read {path}: {text}"),
            }
        }
        for path in BESIDE {
            assert!(
                text.contains(&format!("open {path}\n")),
                "{profile}: {path} beside the stores is unreadable: {text}"
            );
        }
    }
}

#[test]
fn browsers_in_every_channel_snap_flatpak_and_unlisted_electron_apps_are_unreadable() {
    unreadable(
        &[
            "snap/firefox/common/.mozilla/firefox/p.default/cookies.sqlite",
            "snap/chromium/common/chromium/Default/Login Data",
            ".var/app/org.mozilla.firefox/.mozilla/firefox/p.default/logins.json",
            ".var/app/com.slack.Slack/config/Slack/Cookies",
            ".config/google-chrome-beta/Default/Login Data",
            ".config/google-chrome-unstable/Default/Cookies",
            ".mozilla/firefox/p.default/key4.db",
            // Nobody named these: a Chromium fork, an Electron app, a Firefox fork, a WebKit app.
            ".config/NewBrowser/Local State",
            ".config/NewElectronApp/Local Storage/leveldb/000003.log",
            ".newfox/profiles.ini",
            ".local/share/webapp/Local Storage/leveldb/000005.ldb",
        ],
        &[],
    );
}

#[test]
fn chat_sessions_are_unreadable() {
    unreadable(
        &[
            ".local/share/TelegramDesktop/tdata/key_datas",
            ".config/Signal/config.json",
            ".config/discord/settings.json",
            ".config/Slack/storage/root-state.json",
            ".config/Element/config.json",
            ".purple/accounts.xml",
            ".weechat/sec.conf",
        ],
        &[],
    );
}

#[test]
fn editors_secret_storage_and_remote_servers_data_are_unreadable() {
    unreadable(
        &[
            ".config/Code/User/globalStorage/state.vscdb",
            ".config/Cursor/User/globalStorage/state.vscdb",
            ".config/Windsurf/User/globalStorage/state.vscdb",
            ".vscode-server/data/User/globalStorage/state.vscdb",
            ".cursor-server/data/User/globalStorage/state.vscdb",
            ".vscode/cli/token.json",
            ".config/JetBrains/IntelliJIdea2024.1/c.kdbx",
        ],
        &[],
    );
}

#[test]
fn llm_keys_and_agent_configuration_are_unreadable() {
    unreadable(
        &[
            ".config/io.datasette.llm/keys.json",
            ".continue/config.yaml",
            ".config/aichat/config.yaml",
            ".env",
            ".cursor/mcp.json",
            ".codeium/windsurf/mcp_config.json",
            ".config/goose/config.yaml",
            ".config/Claude/claude_desktop_config.json",
            ".aider.conf.yml",
        ],
        &[("aider", &[".aider.conf.yml"])],
    );
}

/// Each agent's settings, login and sessions: readable (and writable) under its own profile, and
/// under no other, `default` included.
#[test]
fn each_agents_state_is_readable_under_its_own_profile_only() {
    unreadable(
        &[
            ".claude/settings.json",
            ".claude.json",
            ".codex/config.toml",
            ".gemini/settings.json",
            ".config/opencode/opencode.json",
            ".local/share/opencode/auth.json",
            ".local/state/opencode/prompt-history.jsonl",
            ".aider/oauth-keys.env",
        ],
        &[
            ("claude-code", &[".claude/settings.json"]),
            ("codex", &[".codex/config.toml"]),
            ("gemini", &[".gemini/settings.json"]),
            (
                "opencode",
                &[
                    ".config/opencode/opencode.json",
                    ".local/share/opencode/auth.json",
                    ".local/state/opencode/prompt-history.jsonl",
                ],
            ),
            ("aider", &[".aider/oauth-keys.env"]),
        ],
    );
}

#[test]
fn package_managers_tokens_are_unreadable() {
    unreadable(
        &[
            ".config/pnpm/rc",
            ".yarnrc",
            ".config/pypoetry/auth.toml",
            ".local/share/uv/credentials/credentials.toml",
            ".config/nix/nix.conf",
            ".config/cachix/cachix.dhall",
            ".Renviron",
        ],
        &[],
    );
}

#[test]
fn services_tokens_are_unreadable() {
    unreadable(
        &[
            ".acme.sh/account.conf",
            ".vultr-cli.yaml",
            ".ovh.conf",
            ".config/argocd/config",
            ".expo/state.json",
            ".gsutil/credstore2",
            ".config/configstore/firebase-tools.json",
        ],
        &[],
    );
}

#[test]
fn machine_keys_clouds_forges_password_stores_and_databases_are_unreadable() {
    unreadable(
        &[
            ".ssh/id_ed25519",
            ".minisign/minisign.key",
            ".aws/credentials",
            ".talos/config",
            ".docker/machine/certs/key.pem",
            ".config/gh/hosts.yml",
            ".travis/config.yml",
            ".lpass/session_privatekey",
            ".pgpass",
        ],
        &[],
    );
}

/// Histories by name, where tools keep them, and any dot-entry of the home directory named like
/// one (a REPL nobody listed).
#[test]
fn every_history_a_shell_or_repl_writes_is_unreadable() {
    unreadable(
        &[
            ".bash_history",
            ".local/state/nvim/shada/main.shada",
            ".irb_history",
            ".julia/logs/repl_history.jl",
            ".Rhistory",
            ".mongodb/mongosh/mongosh_repl_history",
            ".duckdb_history",
            ".clickhouse-client-history",
            ".dbshell",
            ".newrepl_history",
            ".calc-hist",
        ],
        &[],
    );
}

/// The same rules as an ordinary user (the directories the finders look in listed with that
/// user's rights), for the families found by what they hold or how they are named.
#[test]
fn stores_found_by_what_they_are_are_unreadable_to_an_ordinary_user_too() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let secrets = [
        ".config/NewElectronApp/Local Storage/leveldb/000003.log",
        ".newrepl_history",
        "snap/firefox/common/.mozilla/firefox/p.default/cookies.sqlite",
    ];
    for path in secrets.iter().chain(BESIDE) {
        let file = env.home.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, format!("read {path}\n")).unwrap();
    }
    let reads: String = secrets
        .iter()
        .chain(BESIDE)
        .map(|p| format!("cat \"$HOME/{p}\" 2>/dev/null; "))
        .collect();
    let script = format!(
        "cd {} && \"$ISOLATE\" run -- sh -c '{}echo done'",
        repo.display(),
        reads.replace('\'', "'\\''")
    );
    let out = env.as_ordinary_user(&script);
    let text = stdout(&out);
    assert!(text.ends_with("done\n"), "{text}{}", stderr(&out));
    for path in secrets {
        assert!(
            !text.contains(&format!("read {path}\n")),
            "read {path}: {text}"
        );
    }
    for path in BESIDE {
        assert!(text.contains(&format!("read {path}\n")), "{path}: {text}");
    }
}

/// `policy show` lists the families, with how the unnamed ones are found.
#[test]
fn policy_show_lists_the_families() {
    let env = TestEnv::new();
    let out = env.isolate(env.path(), ["policy", "show", "default", "--json"]);
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let families = shown["credential_families"].as_array().unwrap();
    let names: Vec<&str> = families
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    for want in [
        "browsers, Electron apps and mail",
        "chat",
        "editors",
        "LLM tools and agents' configuration",
        "agents' own state",
        "package managers",
        "services' tools",
        "shell and REPL histories",
    ] {
        assert!(names.contains(&want), "{want} not in {names:?}");
    }
    assert!(families
        .iter()
        .any(|f| f["found"].as_array().is_some_and(|a| !a.is_empty())));
    let human = env.isolate(env.path(), ["policy", "show", "default"]);
    let text = stdout(&human);
    assert!(text.contains("credential families"), "{text}");
    assert!(text.contains("strict reads nothing of ~"), "{text}");
}
