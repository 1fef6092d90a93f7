use landlock::RulesetStatus;

use super::rights::right_names;
use super::*;

#[test]
fn right_names_follow_the_abi() {
    let read = right_names(plan::Access::Read, 7);
    assert_eq!(read, ["execute", "read_file", "read_dir"]);
    let write = right_names(plan::Access::Write, 7);
    assert!(write.contains(&"truncate".to_string()) && !write.contains(&"ioctl_dev".to_string()));
    let file = right_names(plan::Access::WriteFile, 2);
    assert_eq!(file, ["write_file", "read_file"]);
}

#[test]
fn a_ruleset_enforced_less_than_fully_fails_closed() {
    assert!(require_full(&RulesetStatus::FullyEnforced, true, &"full").is_ok());
    for (ruleset, no_new_privs) in [
        (RulesetStatus::NotEnforced, true),
        (RulesetStatus::PartiallyEnforced, true),
        (RulesetStatus::FullyEnforced, false),
    ] {
        let err = require_full(&ruleset, no_new_privs, &"less").unwrap_err();
        assert!(matches!(err, Error::LandlockNotEnforced { .. }), "{err}");
        assert!(
            err.to_string().contains("enforced less than asked"),
            "{err}"
        );
    }
}
