//! The Landlock ruleset of a plan. The rights are pinned to the ABIs isolate was built and tested
//! against (filesystem rights of ABI 5, TCP rights of ABI 4, scopes of ABI 6), never "everything
//! the kernel knows", and every requested right is a hard requirement: if the kernel would enforce
//! less than the plan says, the job does not start. (The plan asks only for what the kernel has:
//! best-effort features it lacks were already turned into gaps.)

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, PathFd,
    RestrictionStatus, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

use crate::error::{Error, Result};
use crate::sandbox::plan::{self, Rules};
use crate::sandbox::step_failed;

/// The newest filesystem rights isolate handles (ABI 5 added device ioctls; 6 and 7 added none).
const FS_ABI: ABI = ABI::V5;
const SCOPE_ABI: ABI = ABI::V6;

fn fs_abi(kernel: u32) -> ABI {
    ABI::from(kernel.min(FS_ABI as u32) as i32)
}

/// The filesystem rights of each kind of path rule on a kernel with `abi`.
fn rights(access: plan::Access, abi: u32) -> BitFlags<AccessFs> {
    let abi = fs_abi(abi);
    match access {
        plan::Access::Read => AccessFs::from_read(abi),
        plan::Access::List => BitFlags::from(AccessFs::ReadDir),
        // Writable trees get every right except making device nodes and ioctls on devices.
        plan::Access::Write => {
            AccessFs::from_all(abi)
                & !(AccessFs::MakeChar | AccessFs::MakeBlock | AccessFs::IoctlDev)
        }
        // isolate reads the worktree after the job: a FIFO there (a `.gitignore`, a ref) would
        // block every read of it.
        plan::Access::Worktree => {
            AccessFs::from_all(abi)
                & !(AccessFs::MakeChar
                    | AccessFs::MakeBlock
                    | AccessFs::IoctlDev
                    | AccessFs::MakeFifo)
        }
        plan::Access::WriteFile => {
            BitFlags::from(AccessFs::ReadFile)
                | AccessFs::WriteFile
                | (AccessFs::from_file(abi) & AccessFs::Truncate)
        }
        plan::Access::Device => {
            BitFlags::from(AccessFs::ReadFile)
                | AccessFs::WriteFile
                | (AccessFs::from_file(abi) & (AccessFs::Truncate | AccessFs::IoctlDev))
        }
        // A rule of the seccomp layer, and a path carved out of the read rules: no right.
        plan::Access::Connect | plan::Access::Deny => BitFlags::empty(),
    }
}

/// The names of the rights a path rule grants (`read_file`, `make_dir`, …), for `policy show`.
pub fn right_names(access: plan::Access, abi: u32) -> Vec<String> {
    rights(access, abi)
        .iter()
        .map(|right| snake_case(&format!("{right:?}")))
        .collect()
}

fn snake_case(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Restricts the calling thread (and everything it execs) to `rules`.
pub fn restrict_self(rules: &Rules) -> Result<RestrictionStatus> {
    let abi = fs_abi(rules.abi);
    let all = AccessFs::from_all(abi);
    let file_rights = AccessFs::from_file(abi);

    let mut scopes = BitFlags::<Scope>::empty();
    if rules.scope_signals {
        scopes |= Scope::Signal;
    }
    if rules.scope_abstract_unix {
        scopes |= Scope::AbstractUnixSocket;
    }
    let mut net = BitFlags::<AccessNet>::empty();
    if rules.connect_tcp.is_some() {
        net |= AccessNet::ConnectTcp;
    }
    if rules.bind_tcp.is_some() {
        net |= AccessNet::BindTcp;
    }

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(step_failed("landlock ruleset"))?;
    if !net.is_empty() {
        ruleset = ruleset
            .handle_access(net)
            .map_err(step_failed("landlock tcp rules"))?;
    }
    if !scopes.is_empty() {
        ruleset = ruleset
            .scope(scopes & Scope::from_all(SCOPE_ABI))
            .map_err(step_failed("landlock scopes"))?;
    }
    let mut created = ruleset.create().map_err(step_failed("landlock ruleset"))?;
    let rules_with_rights = (rules.read.iter().map(|p| (p, plan::Access::Read)))
        .chain(rules.list.iter().map(|p| (p, plan::Access::List)))
        .chain(rules.write.iter().map(|p| (p, plan::Access::Write)))
        .chain(rules.worktree.iter().map(|p| (p, plan::Access::Worktree)))
        .chain(
            rules
                .write_files
                .iter()
                .map(|p| (p, plan::Access::WriteFile)),
        )
        .chain(rules.devices.iter().map(|p| (p, plan::Access::Device)));
    for (path, access) in rules_with_rights {
        let fd = match PathFd::new(path) {
            Ok(fd) => fd,
            // A read rule for an entry that has gone since the plan was made (a carved directory's
            // entries are listed one by one: another program may remove one meanwhile) grants
            // nothing: what is not there cannot be read. Every other rule must hold.
            Err(_)
                if matches!(access, plan::Access::Read | plan::Access::List)
                    && std::fs::symlink_metadata(path).is_err() =>
            {
                continue;
            }
            Err(e) => return Err(step_failed(path.display().to_string())(e)),
        };
        let mut access = rights(access, rules.abi);
        // A file (a readable config file, a writable state file) takes only file rights: Landlock
        // refuses directory rights on it.
        if !path.is_dir() {
            access &= file_rights;
        }
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(step_failed(format!("landlock rule for {}", path.display())))?;
    }
    let ports = (rules
        .connect_tcp
        .iter()
        .flatten()
        .map(|&p| (p, AccessNet::ConnectTcp)))
    .chain(
        rules
            .bind_tcp
            .iter()
            .flatten()
            .map(|&p| (p, AccessNet::BindTcp)),
    );
    for (port, access) in ports {
        created = created
            .add_rule(NetPort::new(port, access))
            .map_err(step_failed(format!("landlock rule for tcp port {port}")))?;
    }
    let status = created
        .restrict_self()
        .map_err(step_failed("landlock restrict_self"))?;
    require_full(&status.ruleset, status.no_new_privs, &status)?;
    Ok(status)
}

/// Fails closed on what `restrict_self` reports (`status`, shown in the error): every right was
/// asked as a hard requirement, so a ruleset the kernel enforced only in part, or not at all, or
/// without `no_new_privs`, is less than the plan says, and CMD must not run under it.
fn require_full(
    ruleset: &RulesetStatus,
    no_new_privs: bool,
    status: &dyn std::fmt::Debug,
) -> Result<()> {
    match (ruleset, no_new_privs) {
        (RulesetStatus::FullyEnforced, true) => Ok(()),
        _ => Err(Error::LandlockNotEnforced {
            status: format!("{status:?}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn right_names_follow_the_abi() {
        let read = right_names(plan::Access::Read, 7);
        assert_eq!(read, ["execute", "read_file", "read_dir"]);
        let write = right_names(plan::Access::Write, 7);
        assert!(
            write.contains(&"truncate".to_string()) && !write.contains(&"ioctl_dev".to_string())
        );
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
}
