//! What no profile reads or passes on, in one place: the credential stores of the usual tools
//! (carved out of every read rule, `plan::carve`) and the names of variables that carry secrets
//! (removed from every job's environment). Every profile starts from these; a profile adds paths
//! (`deny_read`) and patterns (`remove_matching`), and re-allows exactly what its agent needs: a
//! read rule naming a file inside a store, a variable under `keep`. Paths are as the tools'
//! documentation gives them; one that does not exist on this machine is skipped.
//! The stores are here, those the caller's variables name in named.rs; the secret variables'
//! names in variables.rs.

mod named;
#[cfg(test)]
mod tests;
mod variables;

pub use variables::SECRET_VARIABLES;

/// Credential stores under the home directory (and the user's XDG directories there).
pub const STORES: &[&str] = &[
    // Remote shells and signing: keys, agents' configuration, known hosts.
    "~/.ssh",
    "~/.gnupg",
    // Clouds and clusters (minikube's and Teleport's client keys, OpenStack's and Terraform's
    // credentials, Alibaba, Tencent and IBM clouds' CLIs, Chef's client keys).
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.kube",
    "~/.oci",
    "~/.config/doctl",
    "~/.s3cfg",
    "~/.boto",
    "~/.config/rclone",
    "~/.databrickscfg",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.vault-token",
    "~/.fly",
    "~/.minikube",
    "~/.tsh",
    "~/.config/openstack/clouds.yaml",
    "~/.config/openstack/secure.yaml",
    "~/.terraformrc",
    "~/.aliyun",
    "~/.tccli",
    "~/.bluemix",
    "~/.linode-cli",
    "~/.chef",
    // Remote X servers' and ICE sessions' cookies.
    "~/.Xauthority",
    "~/.ICEauthority",
    // Containers.
    "~/.docker/config.json",
    // Docker's default `DOCKER_CERT_PATH` (client keys of remote daemons) and its contexts' keys.
    "~/.docker/key.pem",
    "~/.docker/cert.pem",
    "~/.docker/ca.pem",
    "~/.docker/contexts/tls",
    "~/.config/containers/auth.json",
    "~/.config/helm/repositories.yaml",
    "~/.config/helm/registry",
    // git hosts and forges.
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.config/gh",
    "~/.config/hub",
    "~/.config/glab-cli",
    "~/.subversion/auth",
    // Package registries.
    "~/.npmrc",
    "~/.yarnrc.yml",
    "~/.pypirc",
    "~/.config/pip/pip.conf",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.gem/credentials",
    "~/.m2/settings-security.xml",
    "~/.m2/settings.xml",
    "~/.gradle/gradle.properties",
    "~/.nuget/NuGet/NuGet.Config",
    "~/.composer/auth.json",
    "~/.config/composer/auth.json",
    "~/.bundle/config",
    "~/.config/jfrog",
    // Tokens and keys of other tools, where their documentation says they keep them: Hugging Face,
    // sops' age keys, Pulumi, Kaggle, Hetzner, Scaleway, Linode, Cloud Foundry, CircleCI, MinIO,
    // Firebase, Cloudflare's wrangler, Supabase, Vercel, Railway, Stripe, Sentry, ngrok, Doppler,
    // Gitea's tea, dbt and SnowSQL connection profiles, keyrings.alt's file keyring.
    "~/.cache/huggingface/token",
    "~/.cache/huggingface/stored_tokens",
    "~/.huggingface/token",
    "~/.config/sops/age/keys.txt",
    "~/.pulumi/credentials.json",
    "~/.kaggle/kaggle.json",
    "~/.config/hcloud/cli.toml",
    "~/.config/scw/config.yaml",
    "~/.config/linode-cli",
    "~/.cf/config.json",
    "~/.circleci/cli.yml",
    "~/.mc/config.json",
    "~/.config/configstore/firebase-tools.json",
    "~/.wrangler/config/default.toml",
    "~/.config/.wrangler/config/default.toml",
    "~/.supabase/access-token",
    "~/.local/share/com.vercel.cli/auth.json",
    "~/.railway/config.json",
    "~/.config/stripe/config.toml",
    "~/.sentryclirc",
    "~/.config/ngrok/ngrok.yml",
    "~/.ngrok2/ngrok.yml",
    "~/.doppler",
    "~/.config/tea/config.yml",
    "~/.dbt/profiles.yml",
    "~/.snowsql/config",
    "~/.local/share/python_keyring",
    // Netlify, Cloudflare's tunnels, WakaTime, adb's key, Ollama's key, borg's repository keys,
    // wallets' keystores, mail clients' passwords, Emacs' auth-source (netrc's format).
    "~/.netlify/config.json",
    "~/.config/netlify/config.json",
    "~/.cloudflared",
    "~/.wakatime.cfg",
    "~/.android/adbkey",
    "~/.ollama/id_ed25519",
    "~/.config/borg/keys",
    "~/.ethereum/keystore",
    "~/.msmtprc",
    "~/.config/msmtp",
    "~/.mbsyncrc",
    "~/.fetchmailrc",
    "~/.authinfo",
    "~/.authinfo.gpg",
    // Jupyter's kernels and servers: each connection file holds the key that signs the code sent
    // to a kernel listening on localhost TCP, each server file the token of its HTTP API; with
    // either, code runs in the user's kernel, outside the sandbox.
    "~/.local/share/jupyter/runtime",
    "~/.ipython/profile_default/security",
    // Password stores and keyrings.
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.local/share/kwalletd",
    "~/.config/op",
    "~/.config/Bitwarden CLI",
    "~/.pki",
    // Browser and mail profiles (cookies, saved passwords, sessions).
    "~/.mozilla",
    "~/.thunderbird",
    "~/.config/google-chrome",
    "~/.config/chromium",
    "~/.config/BraveSoftware",
    "~/.config/microsoft-edge",
    "~/.config/vivaldi",
    "~/.config/opera",
    // Shell and REPL histories (commands typed with secrets in them).
    "~/.bash_history",
    "~/.zsh_history",
    "~/.zhistory",
    "~/.histfile",
    "~/.local/share/fish/fish_history",
    "~/.python_history",
    "~/.node_repl_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.sqlite_history",
    "~/.rediscli_history",
    "~/.lesshst",
    "~/.local/share/atuin",
    "~/.viminfo",
    // Databases' password files.
    "~/.pgpass",
    "~/.my.cnf",
    "~/.mylogin.cnf",
    "~/.config/github-copilot",
];

/// The agents' own logins and configuration with keys in it (Claude Code keeps a /login API key
/// and MCP servers' tokens in .claude.json): stores like `STORES`', but each agent's profile
/// writes (so reads) its own directory, and isolate carries ~/.claude.json over itself, outside
/// the sandbox. The one kind of store a write rule may hold (plan/job.rs).
pub const LOGINS: &[&str] = &[
    "~/.claude.json",
    "~/.claude/.claude.json",
    "~/.claude/.credentials.json",
    "~/.codex/auth.json",
    "~/.gemini/oauth_creds.json",
    "~/.local/share/opencode/auth.json",
];

/// Credential stores outside the home directory: Kerberos' default ticket cache, the secrets a
/// container or a Kubernetes pod is given (its service account's token), and the container
/// registries' login kept in the runtime directory.
pub const SYSTEM_STORES: &[&str] = &[
    "/tmp/krb5cc_$UID",
    "/run/secrets",
    "/var/run/secrets",
    // Podman's and Buildah's login (`podman login` keeps it in the runtime directory).
    "/run/user/$UID/containers/auth.json",
];

/// `STORES` and `LOGINS` as rules: under `~` (the caller's `HOME`), and under the user's home
/// directory of the password database too when `HOME` names another place (`sudo -E`, a test's
/// home), so that a changed `HOME` never opens the real stores; the XDG directories' stores where
/// the XDG variables move them; `SYSTEM_STORES`; and the stores the caller's variables name
/// (named.rs).
pub fn stores() -> Vec<String> {
    let var = |name: &str| std::env::var_os(name);
    let mut out = in_homes(&[STORES, LOGINS]);
    out.extend(SYSTEM_STORES.iter().map(|s| s.to_string()));
    out.extend(named::stores(&var, named::Kind::Every));
    out
}

/// Why `stores()` cannot be made here, if it cannot: a variable it reads, or the home directory
/// of the password database, that is not UTF-8 (a rule is text; the store it names would be left
/// open).
pub fn unusable() -> Option<String> {
    let var = |name: &str| std::env::var_os(name);
    if let Some(name) = named::not_utf8(&var) {
        return Some(format!(
            "${name} is not UTF-8, so the credential store it names cannot be denied; set it to a \
             UTF-8 path or unset it"
        ));
    }
    let real = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()?;
    real.dir.to_str().is_none().then(|| {
        format!(
            "the home directory {} is not UTF-8, so its credential stores cannot be denied",
            real.dir.display()
        )
    })
}

/// The agents' logins among `stores()`, as rules.
pub fn logins() -> Vec<String> {
    let var = |name: &str| std::env::var_os(name);
    let mut out = in_homes(&[LOGINS]);
    out.extend(named::stores(&var, named::Kind::Logins));
    out
}

/// `path` as a rule that expands to it (plan/expand.rs): each `$` doubled. For a path the
/// machine gave (a variable's value, a home directory), never for one of the lists above, whose
/// `$UID` is to be expanded.
fn literal(path: &str) -> String {
    path.replace('$', "$$")
}

/// `lists` under `~`, and under the password database's home directory when `HOME` is another.
fn in_homes(lists: &[&[&str]]) -> Vec<String> {
    let all = || lists.iter().flat_map(|list| list.iter());
    let mut out: Vec<String> = all().map(|s| s.to_string()).collect();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let real = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|user| user.dir);
    if let Some(real) = real.filter(|real| Some(real) != home.as_ref()) {
        out.extend(
            all()
                .filter_map(|s| s.strip_prefix("~/"))
                .map(|rest| literal(&real.join(rest).display().to_string())),
        );
    }
    out
}
