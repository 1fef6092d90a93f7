//! The Landlock ruleset of a plan. The rights are pinned to the ABIs isolate was built and tested
//! against (filesystem rights of ABI 5, scopes of ABI 6), never "everything the kernel knows", and
//! every requested right is a hard requirement: if the kernel would enforce less than the plan says,
//! the job does not start.

use landlock::{
    Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, RestrictionStatus,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

use crate::sandbox::plan::Rules;

/// The newest filesystem rights isolate handles (ABI 5 added device ioctls; 6 and 7 added none).
const FS_ABI: ABI = ABI::V5;
const SCOPE_ABI: ABI = ABI::V6;

fn fs_abi(kernel: u32) -> ABI {
    ABI::from(kernel.min(FS_ABI as u32) as i32)
}

/// Restricts the calling thread (and everything it execs) to `rules`.
pub fn restrict_self(rules: &Rules) -> Result<RestrictionStatus, String> {
    let abi = fs_abi(rules.abi);
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    // Writable trees get every right except making device nodes and ioctls on devices.
    let write = all & !(AccessFs::MakeChar | AccessFs::MakeBlock | AccessFs::IoctlDev);
    let file = BitFlags::from(AccessFs::ReadFile)
        | AccessFs::WriteFile
        | (AccessFs::from_file(abi) & AccessFs::Truncate);

    let mut scopes = BitFlags::<Scope>::empty();
    if rules.scope_signals {
        scopes |= Scope::Signal;
    }
    if rules.scope_abstract_unix {
        scopes |= Scope::AbstractUnixSocket;
    }

    let err = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(|e| err("landlock ruleset", &e))?;
    if !scopes.is_empty() {
        ruleset = ruleset
            .scope(scopes & Scope::from_all(SCOPE_ABI))
            .map_err(|e| err("landlock scopes", &e))?;
    }
    let mut created = ruleset.create().map_err(|e| err("landlock ruleset", &e))?;
    let rules_with_rights = (rules.read.iter().map(|p| (p, read)))
        .chain(rules.write.iter().map(|p| (p, write)))
        .chain(rules.write_files.iter().map(|p| (p, file)));
    for (path, access) in rules_with_rights {
        let fd = PathFd::new(path).map_err(|e| err(&path.display().to_string(), &e))?;
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| err(&format!("landlock rule for {}", path.display()), &e))?;
    }
    let status = created
        .restrict_self()
        .map_err(|e| err("landlock restrict_self", &e))?;
    if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
        return Err(format!("the kernel enforced less than asked: {status:?}"));
    }
    Ok(status)
}
