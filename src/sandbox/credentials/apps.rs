//! The families of credential stores that desktop and AI applications keep: browsers and mail
//! clients, chat, editors, the LLM tools and agents' configurations that hold keys, and each
//! agent's own state (its login). A browser's or Electron app's profile is found by what it holds
//! too (found.rs), and so is every app's data in snap's `~/snap` and Flatpak's `~/.var/app`,
//! denied whole: neither kind of app can run inside a job anyway (snap's launcher is setuid, which
//! `no_new_privs` voids; Flatpak's needs a user namespace, which the seccomp layer refuses).

use super::found::Finder;
use super::Family;

pub(super) const BROWSERS: Family = Family {
    name: "browsers, Electron apps and mail",
    what: "profiles (cookies, saved passwords, sessions), every channel; snap's and Flatpak's \
           app data whole",
    paths: &[
        "~/.mozilla",
        "~/.thunderbird",
        "~/.librewolf",
        "~/.waterfox",
        "~/.floorp",
        "~/.zen",
        "~/.moonchild productions",
        "~/.config/google-chrome",
        "~/.config/google-chrome-beta",
        "~/.config/google-chrome-unstable",
        "~/.config/chromium",
        "~/.config/BraveSoftware",
        "~/.config/microsoft-edge",
        "~/.config/microsoft-edge-beta",
        "~/.config/microsoft-edge-dev",
        "~/.config/vivaldi",
        "~/.config/vivaldi-snapshot",
        "~/.config/opera",
        "~/.config/opera-beta",
        "~/.config/opera-developer",
        "~/.config/yandex-browser",
        "~/.config/epiphany",
        "~/.local/share/epiphany",
        "~/.local/share/qutebrowser",
        "~/.config/falkon",
        "~/.config/evolution",
        "~/.local/share/evolution",
        "~/.msmtprc",
        "~/.config/msmtp",
        "~/.mbsyncrc",
        "~/.fetchmailrc",
        "~/.authinfo",
        "~/.authinfo.gpg",
        "~/snap",
        "~/.var/app",
    ],
    // A Chromium-based browser's data directory holds `Local State`, an Electron app's `Local
    // Storage`, a Mozilla-based one's `profiles.ini`; directly in `~` only the browsers' are
    // looked for (Electron keeps its apps' data in `~/.config`).
    found: &[
        Finder::Holding {
            within: &["~/.config", "~/.local/share"],
            markers: &["Local State", "Local Storage", "profiles.ini"],
        },
        Finder::Holding {
            within: &["~"],
            markers: &["profiles.ini", "Local State"],
        },
    ],
    login: false,
};

pub(super) const CHAT: Family = Family {
    name: "chat",
    what: "sessions of Telegram, Signal, Discord, Slack, Element, Teams, Mattermost, Zoom and \
           IRC and XMPP clients",
    paths: &[
        "~/.local/share/TelegramDesktop",
        "~/.TelegramDesktop",
        "~/.config/Signal",
        "~/.config/Signal Beta",
        "~/.config/discord",
        "~/.config/discordcanary",
        "~/.config/discordptb",
        "~/.config/Slack",
        "~/.config/Element",
        "~/.config/Element-Nightly",
        "~/.config/Riot",
        "~/.config/Microsoft",
        "~/.config/teams-for-linux",
        "~/.config/Mattermost",
        "~/.config/Zulip",
        "~/.config/Wire",
        "~/.config/Rocket.Chat",
        "~/.config/skypeforlinux",
        "~/.config/whatsapp-for-linux",
        "~/.config/Beeper",
        "~/.config/Ferdium",
        "~/.config/session-desktop",
        "~/.zoom",
        "~/.config/zoomus.conf",
        "~/.purple",
        "~/.weechat",
        "~/.config/weechat",
        "~/.local/share/weechat",
        "~/.irssi",
        "~/.config/hexchat",
        "~/.local/share/dino",
        "~/.local/share/gajim",
        "~/.config/gajim",
        "~/.local/share/nheko",
        "~/.config/nheko",
        "~/.local/share/fractal",
    ],
    found: &[],
    login: false,
};

pub(super) const EDITORS: Family = Family {
    name: "editors",
    what: "VS Code and its forks (their globalStorage, secret storage, tunnels' tokens), their \
           remote servers' data, JetBrains IDEs",
    paths: &[
        "~/.config/Code",
        "~/.config/Code - Insiders",
        "~/.config/Code - OSS",
        "~/.config/VSCodium",
        "~/.config/Cursor",
        "~/.config/Windsurf",
        "~/.config/Windsurf - Next",
        "~/.config/Trae",
        "~/.vscode/cli",
        "~/.vscode-insiders/cli",
        "~/.vscode-server/data",
        "~/.vscode-server-insiders/data",
        "~/.vscodium-server/data",
        "~/.cursor-server/data",
        "~/.windsurf-server/data",
        "~/.config/JetBrains",
    ],
    found: &[],
    login: false,
};

pub(super) const LLM_TOOLS: Family = Family {
    name: "LLM tools and agents' configuration",
    what: "API keys and MCP servers' tokens in the configuration of llm, Continue, aichat, \
           aider, Cursor, Codeium and Windsurf, goose, Claude Desktop, Copilot and others; \
           a home directory's .env",
    paths: &[
        "~/.env",
        "~/.aider.conf.yml",
        "~/.aider.model.settings.yml",
        "~/.aider.model.metadata.json",
        "~/.config/io.datasette.llm",
        "~/.continue",
        "~/.config/aichat",
        "~/.cursor",
        "~/.config/cursor",
        "~/.codeium",
        "~/.config/goose",
        "~/.local/share/goose",
        "~/.config/Claude",
        "~/.config/github-copilot",
        "~/.copilot",
        "~/.config/shell_gpt",
        "~/.config/mods",
        "~/.config/fabric",
        "~/.config/gptme",
        "~/.config/crush",
        "~/.local/share/crush",
        "~/.config/amp",
        "~/.local/share/amp",
        "~/.qwen",
        "~/.factory",
        "~/.cline",
        "~/.kiro",
        "~/.augment",
        "~/.openhands",
        "~/.plandex-home",
    ],
    found: &[],
    login: false,
};

/// Each agent's own state: its login, its settings (which can hold keys and MCP servers' tokens),
/// its sessions. Denied to every profile but the agent's own, which writes (so reads) it; and
/// isolate carries ~/.claude.json over itself, outside the sandbox.
pub(super) const AGENTS: Family = Family {
    name: "agents' own state",
    what: "the settings, logins and sessions of Claude Code, Codex, Gemini CLI, opencode and \
           aider",
    paths: &[
        "~/.claude",
        "~/.claude.json",
        "~/.codex",
        "~/.gemini",
        "~/.config/opencode",
        "~/.local/share/opencode",
        "~/.local/state/opencode",
        "~/.aider",
    ],
    found: &[],
    login: true,
};
