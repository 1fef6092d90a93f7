//! The Landlock ruleset of a plan. The rights are pinned to the ABIs isolate was built and tested
//! against (filesystem rights of ABI 5, TCP rights of ABI 4, scopes of ABI 6), never "everything
//! the kernel knows", and every requested right is a hard requirement: if the kernel would enforce
//! less than the plan says, the job does not start. (The plan asks only for what the kernel has:
//! best-effort features it lacks were already turned into gaps.)
//! This file builds and enforces the ruleset; rights.rs says which rights each kind of rule grants.

mod rights;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, PathFd,
    RestrictionStatus, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus,
    Scope,
};

use crate::error::{Error, Result};
use crate::sandbox::plan::{self, Rules};
use crate::sandbox::{probe, step_failed};

pub use rights::right_names;
use rights::{fs_abi, rights, SCOPE_ABI};

/// Restricts the calling thread (and everything it execs) to `rules`.
pub fn restrict_self(rules: &Rules) -> Result<RestrictionStatus> {
    let created = add_ports(add_paths(handled(rules)?, rules)?, rules)?;
    let status = created
        .restrict_self()
        .map_err(step_failed("landlock restrict_self"))?;
    require_full(&status.ruleset, status.no_new_privs, &status)?;
    Ok(status)
}

/// Restricts the calling thread, and the threads it starts from then on, to reading beneath
/// `roots` (every other right Landlock has is withheld: no write, no exec, nothing made). For
/// isolate's own reads of what a job wrote: a link there to a FIFO, a device or any file elsewhere
/// then fails at its open (EACCES) instead of blocking or never ending, whenever the job made it.
/// Landlock binds a thread, not its process: the others are untouched. `Ok(false)` on a kernel
/// without the Landlock isolate uses: the reads go unconfined, as the job's own did.
pub fn confine_thread_to_reading(roots: Vec<PathBuf>) -> Result<bool> {
    let Some(abi) = probe::landlock_abi().filter(|&abi| abi >= probe::MIN_ABI) else {
        return Ok(false);
    };
    restrict_self(&Rules::reading(abi, roots))?;
    Ok(true)
}

/// Restricts the calling thread (and everything it starts) to signalling processes in its new
/// domain and those nested in it, and nothing else: the domain around a job's, for its sentinel
/// (sandbox/exec/sentinel.rs). A requirement: fails on a kernel without scopes. `Refer` is the
/// one right every layer withholds unless it grants it (a layer without it refuses every rename
/// into another directory with EXDEV): this one grants it beneath `/`, and the job's own layer
/// decides.
pub fn restrict_signals() -> Result<()> {
    let root = PathFd::new("/").map_err(step_failed("/"))?;
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::Refer)
        .and_then(|ruleset| ruleset.scope(Scope::Signal))
        .and_then(|ruleset| ruleset.create())
        .and_then(|created| created.add_rule(PathBeneath::new(root, AccessFs::Refer)))
        .map_err(step_failed("landlock signal scope"))?
        .restrict_self()
        .map_err(step_failed("landlock restrict_self"))?;
    require_full(&status.ruleset, status.no_new_privs, &status)
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

/// The ruleset, created: the rights, TCP rights and scopes `rules` handle.
fn handled(rules: &Rules) -> Result<RulesetCreated> {
    let abi = fs_abi(rules.abi);
    let all = AccessFs::from_all(abi);

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
    ruleset.create().map_err(step_failed("landlock ruleset"))
}

/// `created` with a rule for every path of `rules`.
fn add_paths(mut created: RulesetCreated, rules: &Rules) -> Result<RulesetCreated> {
    let file_rights = AccessFs::from_file(fs_abi(rules.abi));
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
        // refuses directory rights on it. Asked of the descriptor the rule is made on (not the path
        // again: one lookup less per rule, and no file swapped in between); one that cannot be
        // asked is taken for a file, the narrower.
        let is_dir =
            nix::sys::stat::fstat(&fd).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR);
        if !is_dir {
            access &= file_rights;
        }
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(step_failed(format!("landlock rule for {}", path.display())))?;
    }
    Ok(created)
}

/// `created` with a rule for every TCP port of `rules`.
fn add_ports(mut created: RulesetCreated, rules: &Rules) -> Result<RulesetCreated> {
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
    Ok(created)
}
