//! Merging: a file as written on top of the policy it extends. Lists add, single values override;
//! nothing is read from disk here.

use super::file::{File, PathEntry};
use super::{Compatibility, Filesystem, Limits, Missing, Network, PathRule, Policy, Scopes};

/// `file` on top of `base`: lists add (paths, removed variables), single values override.
pub(super) fn merge(base: Policy, file: File) -> Policy {
    let paths = |mut base: Vec<PathRule>, added: Vec<PathEntry>, default: Missing| {
        for entry in added {
            base.retain(|r| r.path != entry.path);
            base.push(PathRule {
                path: entry.path,
                missing: entry.missing.unwrap_or(default),
            });
        }
        base
    };
    let fs = file.filesystem;
    let net = file.network;
    let mut environment = base.environment;
    for var in file.environment.remove {
        if !environment.remove.contains(&var) {
            environment.remove.push(var);
        }
    }
    for (k, v) in file.environment.set {
        environment.remove.retain(|r| *r != k);
        environment.set.insert(k, v);
    }
    for (k, v) in file.environment.default {
        environment.remove.retain(|r| *r != k);
        environment.default.insert(k, v);
    }
    for pattern in file.environment.remove_matching {
        if !environment.remove_matching.contains(&pattern) {
            environment.remove_matching.push(pattern);
        }
    }
    for name in file.environment.keep {
        environment.remove.retain(|r| *r != name);
        if !environment.keep.contains(&name) {
            environment.keep.push(name);
        }
    }
    let limits = file.limits;
    Policy {
        filesystem: Filesystem {
            read: paths(base.filesystem.read, fs.read, Missing::Note),
            write: paths(base.filesystem.write, fs.write, Missing::Error),
            write_files: paths(base.filesystem.write_files, fs.write_files, Missing::Error),
            installation: fs.installation.unwrap_or(base.filesystem.installation),
            seed: {
                let mut seed = base.filesystem.seed;
                for added in fs.seed {
                    if !seed.contains(&added) {
                        seed.push(added);
                    }
                }
                seed
            },
            deny_read: paths(base.filesystem.deny_read, fs.deny_read, Missing::Ignore),
        },
        network: Network {
            connect: net.connect.unwrap_or(base.network.connect),
            bind: net.bind.unwrap_or(base.network.bind),
            udp: net.udp.unwrap_or(base.network.udp),
            // A socket rule is a read-like grant: a socket that is not there is noted.
            unix_sockets: paths(base.network.unix_sockets, net.unix_sockets, Missing::Note),
            unix_datagram: net.unix_datagram.unwrap_or(base.network.unix_datagram),
            // A list adds to what the base allows.
            allow: {
                let mut allow = base.network.allow;
                for added in net.allow {
                    if !allow.contains(&added) {
                        allow.push(added);
                    }
                }
                allow
            },
            allow_local: net.allow_local.unwrap_or(base.network.allow_local),
        },
        scopes: Scopes {
            signals: file.scopes.signals.unwrap_or(base.scopes.signals),
            abstract_unix_sockets: file
                .scopes
                .abstract_unix_sockets
                .unwrap_or(base.scopes.abstract_unix_sockets),
        },
        environment,
        limits: Limits {
            open_files: limits.open_files.or(base.limits.open_files),
            processes: limits.processes.or(base.limits.processes),
            core_size: limits.core_size.map(|s| s.0).or(base.limits.core_size),
            address_space: limits
                .address_space
                .map(|s| s.0)
                .or(base.limits.address_space),
            timeout: limits.timeout.or(base.limits.timeout),
        },
        compatibility: Compatibility {
            network: file
                .compatibility
                .network
                .unwrap_or(base.compatibility.network),
            scopes: file
                .compatibility
                .scopes
                .unwrap_or(base.compatibility.scopes),
            seccomp: file
                .compatibility
                .seccomp
                .unwrap_or(base.compatibility.seccomp),
        },
        command: {
            let mut command = base.command;
            command.extend(file.command);
            command
        },
    }
}
