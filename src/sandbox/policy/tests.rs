use std::collections::BTreeMap;
use std::time::Duration;

use super::file::File;
use super::merge::merge;
use super::*;

fn parse(text: &str) -> std::result::Result<Policy, String> {
    toml::from_str::<File>(text)
        .map(|f| merge(Policy::default(), f))
        .map_err(|e| e.to_string())
}

#[test]
fn patterns_match_names_as_globs() {
    for (pattern, name, hit) in [
        ("*_TOKEN", "GITHUB_TOKEN", true),
        ("*_TOKEN", "TOKEN", false),
        ("*_TOKEN", "GITHUB_TOKENS", false),
        ("AWS_*", "AWS_SECRET_ACCESS_KEY", true),
        ("AWS_*", "XAWS_A", false),
        ("*_SECRET*", "MY_SECRET_KEY", true),
        ("*_SECRET*", "MY_SECRET", true),
        ("*SECRET*", "SECRET", true),
        ("PATH", "PATH", true),
        ("PATH", "PATHS", false),
        ("A*B*C", "AxxBxxC", true),
        ("A*B*C", "AxxC", false),
        ("*_KEY", "_KEY", true),
        ("*_TOKEN", "github_token", true),
        ("npm_config_//*", "NPM_CONFIG_//registry/:_authToken", true),
    ] {
        assert_eq!(matches(pattern, name), hit, "{pattern} {name}");
    }
}

/// The matching before it stopped allocating: both strings upper-cased, then `str` searches.
fn reference(pattern: &str, name: &str) -> bool {
    let (pattern, name) = (pattern.to_ascii_uppercase(), name.to_ascii_uppercase());
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Every string of up to `len` of `alphabet`.
fn strings(alphabet: &[&str], len: usize) -> Vec<String> {
    let mut all = vec![String::new()];
    let mut last = all.clone();
    for _ in 0..len {
        last = last
            .iter()
            .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}")))
            .collect();
        all.extend(last.iter().cloned());
    }
    all
}

#[test]
fn patterns_match_as_they_did_for_every_short_pattern_and_name() {
    // Stars next to each other and at either end, parts that overlap, cases mixed, a letter
    // beyond ASCII.
    let patterns = strings(&["a", "A", "*", "_", "é"], 4);
    let names = strings(&["a", "A", "b", "_", "é"], 5);
    let mut hits = 0;
    for pattern in &patterns {
        for name in &names {
            let want = reference(pattern, name);
            assert_eq!(matches(pattern, name), want, "{pattern:?} {name:?}");
            hits += usize::from(want);
        }
    }
    assert!(hits > 10_000, "{hits}");
}

#[test]
fn kept_variables_survive_patterns_and_lists_add_along_extends() {
    let base = parse("[environment]\nremove_matching = [\"*_API_KEY\"]\n").unwrap();
    let file: File = toml::from_str("[environment]\nkeep = [\"ANTHROPIC_API_KEY\"]\n").unwrap();
    let policy = merge(base, file);
    let env = &policy.environment;
    assert!(env.removes("OPENAI_API_KEY"));
    assert!(!env.removes("ANTHROPIC_API_KEY"));
    assert!(!env.removes("HOME"));
}

#[test]
fn every_builtin_profile_parses() {
    for (name, text) in BUILTIN {
        let loaded = load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            !loaded.policy.filesystem.read.is_empty(),
            "{name} reads nothing"
        );
        assert!(
            text.starts_with(&format!("# {name}: ")),
            "{name} has no comment block"
        );
    }
}

#[test]
fn an_unknown_key_is_an_error_naming_it_and_its_line() {
    let msg = parse("[filesystem]\nwrtie = [\"/tmp\"]\n").unwrap_err();
    assert!(msg.contains("wrtie") && msg.contains("line 2"), "{msg}");
    let msg = parse("[filesystem]\nread = [{ path = \"/x\", mising = \"ignore\" }]\n").unwrap_err();
    assert!(msg.contains("mising") && msg.contains("line 2"), "{msg}");
    let msg = parse("[network]\nconnect = \"some\"\n").unwrap_err();
    assert!(msg.contains("some") && msg.contains("line 2"), "{msg}");
    let msg = parse("[limits]\ntimeout = \"soon\"\n").unwrap_err();
    assert!(msg.contains("line 2"), "{msg}");
}

#[test]
fn values_of_every_kind() {
    let policy = parse(
        "[filesystem]\nread = [\"/usr\", { path = \"~/.x\", missing = \"ignore\" }]\n\
         [network]\nconnect = [443, 80, 443]\nbind = \"none\"\n\
         [limits]\nopen_files = 64\naddress_space = \"8GiB\"\ncore_size = 0\ntimeout = \"15m\"\n\
         [compatibility]\nnetwork = \"best_effort\"\n",
    )
    .unwrap();
    assert_eq!(policy.filesystem.read[0].missing, Missing::Note);
    assert_eq!(policy.filesystem.read[1].missing, Missing::Ignore);
    assert_eq!(policy.network.connect, Ports::Only(vec![443, 80]));
    assert_eq!(policy.network.bind, Ports::Only(vec![]));
    assert_eq!(policy.limits.address_space, Some(8 << 30));
    assert_eq!(policy.limits.core_size, Some(0));
    assert_eq!(policy.limits.timeout, Some(Duration::from_secs(900)));
    assert_eq!(policy.compatibility.network, Level::BestEffort);
    assert_eq!(policy.compatibility.scopes, Level::Required);
    assert!(parse("[network]\nconnect = [70000]\n").is_err());
}

#[test]
fn extends_adds_lists_and_overrides_values() {
    let loaded = load("claude-code").unwrap();
    assert_eq!(loaded.sources, ["claude-code", "default"]);
    let default = load("default").unwrap().policy;
    let policy = loaded.policy;
    assert_eq!(policy.filesystem.read, default.filesystem.read);
    assert_eq!(policy.environment.remove, default.environment.remove);
    assert_eq!(
        policy
            .environment
            .default
            .get("CLAUDE_CONFIG_DIR")
            .map(String::as_str),
        Some("~/.claude")
    );
    assert!(policy
        .filesystem
        .write
        .iter()
        .any(|r| r.path == "~/.claude"));
    let offline = load("offline").unwrap().policy;
    assert_eq!(offline.network.connect, Ports::Only(vec![]));
    assert_eq!(offline.environment, default.environment);
}

#[test]
fn a_list_extends_the_first_whole_and_adds_what_the_others_say_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("strict-claude.toml");
    std::fs::write(&file, "extends = [\"strict\", \"claude-code\"]\n").unwrap();
    let policy = load(file.to_str().unwrap()).unwrap().policy;
    let strict = load("strict").unwrap().policy;
    // strict's reads, not default's "/" (which claude-code extends).
    assert_eq!(policy.filesystem.read, strict.filesystem.read);
    assert!(policy
        .filesystem
        .write
        .iter()
        .any(|r| r.path == "~/.claude"));
    // claude-code's allowlist: the job's network goes through the proxy (UDP refused there).
    assert!(policy.network.proxied());
    assert!(policy.environment.default.contains_key("CLAUDE_CONFIG_DIR"));
    // And its own key kept among strict's secret patterns.
    assert!(!policy.environment.removes("ANTHROPIC_API_KEY"));
    assert!(policy.filesystem.installation);
    // A cycle through a later entry is refused; so is an empty list.
    let a = dir.path().join("a.toml");
    std::fs::write(&a, "extends = [\"default\", \"./a.toml\"]\n").unwrap();
    assert!(load(a.to_str().unwrap()).is_err());
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "extends = []\n").unwrap();
    assert!(load(empty.to_str().unwrap()).is_err());
}

#[test]
fn defaults_apply_only_where_the_caller_has_none_and_a_tilde_is_home() {
    let env = Environment {
        remove: vec!["GONE".into()],
        set: BTreeMap::from([("SET".to_string(), "~/set".to_string())]),
        default: BTreeMap::from([
            ("KEPT".to_string(), "~/ignored".to_string()),
            ("ADDED".to_string(), "~/.claude".to_string()),
        ]),
        ..Environment::default()
    };
    let mut vars: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
        ("HOME".into(), "/home/u".into()),
        ("GONE".into(), "x".into()),
        ("KEPT".into(), "mine".into()),
    ];
    env.apply(&mut vars, &[]);
    let get = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(get("GONE"), None);
    assert_eq!(get("KEPT"), Some("mine".into()));
    assert_eq!(get("ADDED"), Some("/home/u/.claude".into()));
    assert_eq!(get("SET"), Some("/home/u/set".into()));
}

#[test]
fn a_value_names_the_jobs_own_variables_and_nothing_else() {
    let env = Environment {
        set: BTreeMap::from([
            ("A".to_string(), "$TMPDIR/a.md".to_string()),
            ("B".to_string(), "${ISOLATE_JOB}-b $HOME $ $".to_string()),
            ("C".to_string(), "~/${TMPDIR".to_string()),
        ]),
        ..Environment::default()
    };
    let mut vars: Vec<(std::ffi::OsString, std::ffi::OsString)> =
        vec![("HOME".into(), "/home/u".into())];
    let job: [(&str, &std::ffi::OsStr); 2] = [
        ("TMPDIR", "/s/jobs/x/tmp".as_ref()),
        ("ISOLATE_JOB", "x-1a2b".as_ref()),
    ];
    env.apply(&mut vars, &job);
    let get = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(get("A"), Some("/s/jobs/x/tmp/a.md".into()));
    assert_eq!(get("B"), Some("x-1a2b-b $HOME $ $".into()));
    assert_eq!(get("C"), Some("/home/u/${TMPDIR".into()));
}

#[test]
fn a_worktree_ignore_rule_is_one_line_of_a_pattern() {
    for bad in ["", "  ", "# a comment", ".aider*\n*", "a\rb"] {
        let text = format!("[worktree]\nignore = [{bad:?}]\n");
        assert!(
            toml::from_str::<super::file::File>(&text).is_err(),
            "{bad:?}"
        );
    }
    let file: super::file::File = toml::from_str("[worktree]\nignore = [\".aider*\"]\n").unwrap();
    assert_eq!(file.worktree.ignore[0].as_str(), ".aider*");
}
