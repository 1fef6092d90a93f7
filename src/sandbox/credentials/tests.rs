use super::*;

#[test]
fn a_home_elsewhere_never_opens_the_real_stores() {
    let real = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .dir;
    let stores = stores();
    assert!(stores.iter().any(|s| s == "~/.ssh"));
    if std::env::var_os("HOME").map(std::path::PathBuf::from) != Some(real.clone()) {
        let ssh = real.join(".ssh").display().to_string();
        assert!(stores.contains(&ssh), "{ssh} not in {stores:?}");
    }
}

/// The stores the caller's variables move, where they move them: a tool reads its keys where its
/// variable says, and the job has the same variables.
#[test]
fn stores_named_by_variables_are_where_the_variables_say() {
    let vars = [
        ("HOME", "/home/u"),
        ("GNUPGHOME", "/keys/gnupg/"),
        (
            "KUBECONFIG",
            "/etc/kube/a.yaml::relative/b.yaml:/srv/kube/c.yaml",
        ),
        ("CARGO_HOME", "/opt/cargo"),
        ("KRB5CCNAME", "FILE:/var/krb/cc_1000"),
        ("KRB5_KTNAME", "DIR::/var/krb/dir/tkt"),
        ("XDG_CONFIG_HOME", "/home/u/cfg"),
        ("DOCKER_CONFIG", "$OTHER/docker"),
        ("PASSWORD_STORE_DIR", "/home"),
        ("AWS_CONFIG_FILE", "aws/config"),
    ];
    let var = environment(&vars);
    let got = named::stores(&var, named::Kind::Every);
    for want in [
        "/keys/gnupg",
        "/etc/kube/a.yaml",
        "/srv/kube/c.yaml",
        "/opt/cargo/credentials",
        "/opt/cargo/credentials.toml",
        "/var/krb/cc_1000",
        "/var/krb/dir",
        "/home/u/cfg/gh",
        "/home/u/cfg/gcloud",
    ] {
        assert!(got.iter().any(|s| s == want), "{want} not in {got:?}");
    }
    // Never the tool's whole directory, nothing relative, nothing with a `$`, nothing over home.
    for unwanted in [
        "/opt/cargo",
        "relative/b.yaml",
        "/home",
        "$OTHER/docker/config.json",
    ] {
        assert!(!got.iter().any(|s| s == unwanted), "{unwanted} in {got:?}");
    }
    assert!(!got.iter().any(|s| s.starts_with("aws")), "{got:?}");
    assert!(named::stores(&|_: &str| None, named::Kind::Every).is_empty());
}

/// The agents' logins are stores like any other (denied to every profile but the agent's), and
/// where their variables move them, the moved ones are logins too; no other store is one.
#[test]
fn the_agents_logins_are_stores_and_no_other_store_is_a_login() {
    let vars = [
        ("HOME", "/home/u"),
        ("CLAUDE_CONFIG_DIR", "/cfg/claude"),
        ("GNUPGHOME", "/g"),
    ];
    let var = environment(&vars);
    let logins = named::stores(&var, named::Kind::Logins);
    assert!(logins.contains(&"/cfg/claude".to_string()), "{logins:?}");
    assert!(!logins.iter().any(|l| l.starts_with("/g")), "{logins:?}");
    let every = named::stores(&var, named::Kind::Every);
    assert!(logins.iter().all(|l| every.contains(l)), "{every:?}");
    let (stores, logins) = (stores(), logins_of_home());
    assert!(logins.iter().all(|l| stores.contains(l)));
    let others: Vec<&str> = FAMILIES
        .iter()
        .filter(|f| !f.login)
        .flat_map(|f| f.paths.iter().copied())
        .collect();
    assert!(logins.iter().all(|l| !others.contains(&l.as_str())));
}

fn logins_of_home() -> Vec<String> {
    logins()
        .into_iter()
        .filter(|l| l.starts_with("~/"))
        .collect()
}

/// A lookup of the variables `vars`, as the caller's environment is looked up.
fn environment<'a>(vars: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<std::ffi::OsString> + 'a {
    move |name| {
        vars.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| std::ffi::OsString::from(v))
    }
}

/// The finders: a directory holding a profile's marker, a dot-entry named like a history, in the
/// directories they look in, one level deep, and nothing else.
#[test]
fn the_finders_find_profiles_and_histories_one_level_deep_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let make = |path: &str| {
        let path = home.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    };
    for path in [
        ".config/NewBrowser/Local State",
        ".config/App/Local Storage/leveldb/1.log",
        ".local/share/web/Local Storage/1.log",
        ".fox/profiles.ini",
        ".repl_history",
        ".calc-hist",
        ".lesshst",
        // Not stores: no marker, a marker two levels down, a history not in a dot-entry or deeper.
        ".config/nvim/init.lua",
        ".config/deep/inner/Local State",
        "history.txt",
        ".config/tool/history",
    ] {
        make(path);
    }
    let moved = home.join("cfg");
    std::fs::create_dir_all(moved.join("Moved")).unwrap();
    std::fs::write(moved.join("Moved/Local State"), "x").unwrap();
    let finders: Vec<Finder> = FAMILIES
        .iter()
        .flat_map(|f| f.found.iter().copied())
        .collect();
    let found = found::stores(home, &finders, &[("~/.config/", moved.clone())]);
    let want: Vec<std::path::PathBuf> = [
        ".calc-hist",
        ".config/App",
        ".config/NewBrowser",
        ".fox",
        ".lesshst",
        ".local/share/web",
        ".repl_history",
    ]
    .iter()
    .map(|p| home.join(p))
    .chain(std::iter::once(moved.join("Moved")))
    .collect();
    let mut found = found;
    found.sort();
    let mut want = want;
    want.sort();
    assert_eq!(found, want);
}
