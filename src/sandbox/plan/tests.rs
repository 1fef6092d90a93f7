use super::check::check;
use super::gaps::gaps;
use super::*;
use crate::sandbox::policy;

#[test]
fn expand_home_and_variables() {
    let home = std::env::var("HOME").unwrap();
    assert_eq!(expand("~/.claude").unwrap(), format!("{home}/.claude"));
    assert_eq!(expand("${HOME}/x").unwrap(), format!("{home}/x"));
    assert_eq!(expand("$HOME").unwrap(), home);
    assert!(expand("$ISOLATE_SURELY_UNSET_VAR/x").is_err());
    assert_eq!(expand("/a$$b/$$HOME").unwrap(), "/a$b/$HOME");
    assert!(expand("/a$/b").is_err());
    assert!(expand("/a/${B").is_err());
    assert_eq!(expand("~user/x").unwrap(), "~user/x");
}

#[test]
fn a_required_feature_fails_closed_and_a_best_effort_one_is_a_gap() {
    let kernel = |abi: Option<u32>, seccomp: bool| Kernel {
        landlock_abi: abi,
        seccomp,
    };
    let offline = policy::load("offline").unwrap();
    let err = check(&offline, kernel(Some(3), true))
        .unwrap_err()
        .to_string();
    assert!(err.contains("ABI 4") && err.contains("ABI 3"), "{err}");
    assert_eq!(check(&offline, kernel(Some(4), true)).unwrap(), 4);
    let default = policy::load("default").unwrap();
    assert_eq!(check(&default, kernel(Some(3), true)).unwrap(), 3);
    let states = features(&default.policy, kernel(Some(3), true));
    let gaps = gaps(&default.policy, kernel(Some(3), true), &states, true);
    // The broker scopes signals and abstract sockets itself where Landlock cannot...
    assert!(!gaps.iter().any(|g| g.contains("signals")), "{gaps:?}");
    assert!(!gaps.iter().any(|g| g.contains("abstract")), "{gaps:?}");
    // ...and without it, neither is scoped.
    let mut weak = policy::load("default").unwrap();
    weak.policy.compatibility.seccomp = policy::Level::BestEffort;
    let states = features(&weak.policy, kernel(Some(3), false));
    let weak_gaps = super::gaps::gaps(&weak.policy, kernel(Some(3), false), &states, true);
    assert!(
        weak_gaps.iter().any(|g| g.contains("signals")),
        "{weak_gaps:?}"
    );
    assert!(
        weak_gaps.iter().any(|g| g.contains("abstract")),
        "{weak_gaps:?}"
    );
    assert!(check(&default, kernel(Some(2), true)).is_err());
    assert!(check(&default, kernel(None, true)).is_err());
    // The seccomp layer is required unless the policy says otherwise.
    let err = check(&default, kernel(Some(7), false)).unwrap_err();
    assert!(matches!(err, Error::SeccompUnavailable { .. }), "{err}");
}

#[test]
fn every_builtin_profile_resolves() {
    for (name, _) in policy::BUILTIN {
        let loaded = policy::load(name).unwrap();
        let preview = preview(&loaded);
        assert!(
            preview.paths.iter().all(|p| p.outcome != Outcome::Failed),
            "{name}: {:?}",
            preview.paths
        );
        assert!(!preview.gaps.is_empty(), "{name}");
    }
}
