//! The family of histories: what shells, REPLs and database clients keep of what was typed, secrets
//! typed on a command line included. By name where a tool keeps its history elsewhere than a
//! dotfile of the home directory; every entry of the home directory whose name says it is a
//! history (found.rs) besides.

use super::found::Finder;
use super::Family;

pub(super) const HISTORIES: Family = Family {
    name: "shell and REPL histories",
    what: "what shells, REPLs and database clients keep of what was typed, where they keep it",
    paths: &[
        "~/.bash_history",
        "~/.zsh_history",
        "~/.zhistory",
        "~/.histfile",
        "~/.history",
        "~/.sh_history",
        "~/.python_history",
        "~/.node_repl_history",
        "~/.irb_history",
        "~/.Rhistory",
        "~/.psql_history",
        "~/.mysql_history",
        "~/.sqlite_history",
        "~/.duckdb_history",
        "~/.clickhouse-client-history",
        "~/.rediscli_history",
        "~/.dbshell",
        "~/.lesshst",
        "~/.viminfo",
        "~/.local/share/fish/fish_history",
        "~/.local/share/atuin",
        "~/.local/state/nvim/shada",
        "~/.local/share/nvim/shada",
        "~/.ipython/profile_default/history.sqlite",
        "~/.julia/logs/repl_history.jl",
        "~/.mongodb",
        "~/.config/nushell/history.txt",
        "~/.config/nushell/history.sqlite3",
        "~/.local/share/xonsh",
        "~/.local/share/powershell/PSReadLine",
        "~/.config/pgcli/history",
        "~/.config/litecli/history",
        "~/.cassandra/cqlsh_history",
        "~/.local/share/mc/history",
        "~/.local/share/mcfly",
        "~/.hishtory",
        "~/.cache/deno/deno_history.txt",
    ],
    found: &[Finder::Named {
        within: &["~"],
        words: &["history", "_hist", "-hist"],
        suffixes: &["hst"],
    }],
    login: false,
};
