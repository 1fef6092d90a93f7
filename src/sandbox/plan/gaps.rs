//! The gaps: every place the sandbox does not reach for a policy on this kernel, in words for the
//! report, `doctor` and `policy show`. Never hides one (docs/sandbox.md, "Gaps are reported, never
//! hidden").

use super::{Feature, FeatureState, Kernel};
use crate::sandbox::policy::Policy;
use crate::sandbox::probe;

/// The gap of `--no-sandbox`.
pub const NO_SANDBOX: &str =
    "no sandbox (--no-sandbox): nothing is enforced (no Landlock, no capability drop, no resource limits)";

/// Every place the sandbox does not reach (docs/sandbox.md, "Gaps are reported, never hidden").
pub(super) fn gaps(
    policy: &Policy,
    kernel: Kernel,
    states: &[FeatureState],
    reads_unrestricted: bool,
) -> Vec<String> {
    let Some(abi) = kernel.landlock_abi else {
        return vec!["no Landlock on this kernel: isolate cannot sandbox a job here".to_string()];
    };
    let mut gaps = vec![
        "file metadata changes (chmod, chown, timestamps, xattrs) are not restricted by Landlock"
            .to_string(),
    ];
    let state = |f: Feature| states.iter().find(|s| s.feature == f);
    gaps.extend(network(policy, abi, states));
    if reads_unrestricted {
        gaps.push(
            "reads are not restricted: the policy may read every file (but the devices in /dev and the credential stores)"
                .to_string(),
        );
    }
    if state(Feature::DeviceIoctls).is_some_and(|s| !s.available) {
        gaps.push(format!(
            "ioctl on device files is not restricted (needs Landlock ABI {}, kernel has {abi})",
            probe::IOCTL_ABI
        ));
    }
    if missing(states, Feature::Scopes) {
        gaps.extend(unscoped(policy, abi, states));
    }
    if !policy.scopes.signals {
        gaps.push("signals to processes outside the sandbox are allowed by this policy".into());
    }
    if !policy.scopes.abstract_unix_sockets {
        gaps.push(
            "abstract unix sockets outside the sandbox are reachable by this policy, and the \
             job's abstract names by processes outside it"
                .into(),
        );
    }
    gaps
}

/// Asked for by the policy and missing on this kernel.
fn missing(states: &[FeatureState], feature: Feature) -> bool {
    states
        .iter()
        .find(|s| s.feature == feature)
        .is_some_and(|s| s.asked && !s.available)
}

/// The gaps of the policy's network rules on this kernel.
fn network(policy: &Policy, abi: u32, states: &[FeatureState]) -> Vec<String> {
    let mut gaps = Vec::new();
    let seccomp = !missing(states, Feature::Seccomp);
    let net = &policy.network;
    // A domain allowlist restricts connect to the proxy (and the job's own ports).
    let connect = match net.proxied() {
        true => Some(&[][..]),
        false => net.connect.allowed(),
    };
    if net.proxied() {
        gaps.push(format!(
            "tcp reaches the {} allowed names through isolate's proxy (udp is refused: the proxy resolves names): what the job reads can leave to those hosts",
            net.allow.len()
        ));
        if net.allow_local {
            gaps.push(
                "the proxy may reach loopback, private and link-local addresses the allowed names resolve to (allow_local)"
                    .into(),
            );
        }
    }
    match (connect, net.bind.allowed()) {
        (None, None) => gaps.push("tcp connect and bind are not restricted by this policy".into()),
        (None, Some(_)) => gaps.push("tcp connect is not restricted by this policy".into()),
        (Some(_), None) => gaps.push("tcp bind is not restricted by this policy".into()),
        (Some(_), Some(_)) => {}
    }
    if missing(states, Feature::Network) {
        gaps.push(format!(
            "tcp connect and bind rules of the policy are not enforced by Landlock (needs Landlock ABI {}, kernel has {abi}){}",
            probe::NETWORK_ABI,
            if seccomp { "; the seccomp layer still checks every connect's port" } else { "" }
        ));
    }
    if !seccomp {
        let why = probe::seccomp().err().unwrap_or("the kernel lacks it");
        gaps.push(format!(
            "no seccomp layer ({why}): path-named unix sockets outside the job, udp, mptcp, tcp fast open, \
             listen() on an unbound socket, raw and packet sockets, port sharing (SO_REUSEPORT), System V IPC, \
             other processes' limits and priorities, io_uring and user namespaces are not restricted"
        ));
    } else {
        if net.udp.allowed() && !net.proxied() {
            gaps.push("udp (dns included) is not restricted by this policy".into());
        }
        if net.unix_datagram.allowed() {
            gaps.push(
                "datagram unix sockets may send to any path-named datagram socket on the machine (unix_datagram = \"all\")"
                    .into(),
            );
        }
    }
    gaps
}

/// The scopes the policy asks for that this kernel's Landlock lacks.
fn unscoped(policy: &Policy, abi: u32, states: &[FeatureState]) -> Vec<String> {
    let mut gaps = Vec::new();
    let seccomp = !missing(states, Feature::Seccomp);
    // Without Landlock's scope the seccomp layer's broker judges every signal to another process.
    if policy.scopes.signals && !seccomp {
        gaps.push(format!(
            "signals to processes outside the sandbox are not scoped (needs Landlock ABI {}, kernel has {abi})",
            probe::SCOPES_ABI
        ));
    }
    // The seccomp layer checks every connect itself, abstract ones included.
    if policy.scopes.abstract_unix_sockets && !seccomp {
        gaps.push(format!(
            "abstract unix sockets outside the sandbox are reachable (needs Landlock ABI {}, kernel has {abi})",
            probe::SCOPES_ABI
        ));
    }
    gaps
}
