//! Merging: a file as written on top of the policy it extends. Lists add, single values override;
//! nothing is read from disk here.

use super::file::{
    CompatibilityFile, File, FilesystemFile, LimitsFile, NetworkFile, PathEntry, ScopesFile,
};
use super::{
    Compatibility, Environment, Filesystem, Limits, Missing, Network, PathRule, Policy, Scopes,
    Worktree,
};

/// `file` on top of `base`: lists add (paths, removed variables), single values override.
pub(super) fn merge(base: Policy, file: File) -> Policy {
    Policy {
        filesystem: filesystem(base.filesystem, file.filesystem),
        network: network(base.network, file.network),
        scopes: scopes(base.scopes, file.scopes),
        environment: environment(base.environment, file.environment),
        limits: limits(base.limits, file.limits),
        compatibility: compatibility(base.compatibility, file.compatibility),
        command: {
            let mut command = base.command;
            command.extend(file.command);
            command
        },
        worktree: Worktree {
            ignore: added(base.worktree.ignore, file.worktree.ignore),
        },
    }
}

/// `base` with `added`'s entries: an entry for a path already there replaces it, a `missing` left
/// out is `default`.
fn paths(mut base: Vec<PathRule>, added: Vec<PathEntry>, default: Missing) -> Vec<PathRule> {
    for entry in added {
        base.retain(|r| r.path != entry.path);
        base.push(PathRule {
            path: entry.path,
            missing: entry.missing.unwrap_or(default),
        });
    }
    base
}

/// `base` with what of `added` it does not hold yet, in order.
fn added<T: PartialEq>(mut base: Vec<T>, added: Vec<T>) -> Vec<T> {
    for item in added {
        if !base.contains(&item) {
            base.push(item);
        }
    }
    base
}

fn filesystem(base: Filesystem, fs: FilesystemFile) -> Filesystem {
    Filesystem {
        read: paths(base.read, fs.read, Missing::Note),
        write: paths(base.write, fs.write, Missing::Error),
        write_files: paths(base.write_files, fs.write_files, Missing::Error),
        installation: fs.installation.unwrap_or(base.installation),
        seed: added(base.seed, fs.seed),
        deny_read: paths(base.deny_read, fs.deny_read, Missing::Ignore),
    }
}

fn network(base: Network, net: NetworkFile) -> Network {
    Network {
        connect: net.connect.unwrap_or(base.connect),
        bind: net.bind.unwrap_or(base.bind),
        udp: net.udp.unwrap_or(base.udp),
        // A socket rule is a read-like grant: a socket that is not there is noted.
        unix_sockets: paths(base.unix_sockets, net.unix_sockets, Missing::Note),
        unix_datagram: net.unix_datagram.unwrap_or(base.unix_datagram),
        // A list adds to what the base allows.
        allow: added(base.allow, net.allow),
        allow_local: net.allow_local.unwrap_or(base.allow_local),
    }
}

fn scopes(base: Scopes, file: ScopesFile) -> Scopes {
    Scopes {
        signals: file.signals.unwrap_or(base.signals),
        abstract_unix_sockets: file
            .abstract_unix_sockets
            .unwrap_or(base.abstract_unix_sockets),
    }
}

/// Removed variables and patterns add up; a variable the file sets, defaults or keeps is no
/// longer removed by name.
fn environment(mut environment: Environment, file: Environment) -> Environment {
    environment.remove = added(environment.remove, file.remove);
    for (k, v) in file.set {
        environment.remove.retain(|r| *r != k);
        environment.set.insert(k, v);
    }
    for (k, v) in file.default {
        environment.remove.retain(|r| *r != k);
        environment.default.insert(k, v);
    }
    environment.remove_matching = added(environment.remove_matching, file.remove_matching);
    for name in file.keep {
        environment.remove.retain(|r| *r != name);
        if !environment.keep.contains(&name) {
            environment.keep.push(name);
        }
    }
    environment
}

fn limits(base: Limits, limits: LimitsFile) -> Limits {
    Limits {
        open_files: limits.open_files.or(base.open_files),
        processes: limits.processes.or(base.processes),
        core_size: limits.core_size.map(|s| s.0).or(base.core_size),
        address_space: limits.address_space.map(|s| s.0).or(base.address_space),
        timeout: limits.timeout.or(base.timeout),
        cgroup: crate::job::record::JobLimits {
            memory: limits.memory.map(|s| s.0),
            millicpus: limits.cpus.map(|c| (c * 1000.0).round().max(10.0) as u64),
            pids: limits.pids,
        }
        .or(base.cgroup),
    }
}

fn compatibility(base: Compatibility, file: CompatibilityFile) -> Compatibility {
    Compatibility {
        network: file.network.unwrap_or(base.network),
        scopes: file.scopes.unwrap_or(base.scopes),
        seccomp: file.seccomp.unwrap_or(base.seccomp),
    }
}
