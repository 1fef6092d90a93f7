//! The kernel features a policy may ask for (a Landlock ABI, or the seccomp layer), what this kernel
//! offers, and how each stands for a policy (check.rs fails a run closed on them). Never turns a
//! required feature into a gap.

use serde::Serialize;

use crate::sandbox::policy::{Level, Policy};
use crate::sandbox::probe;

/// A kernel feature a policy may ask for: a Landlock ABI, or the seccomp layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    WriteContainment,
    Network,
    DeviceIoctls,
    Scopes,
    /// Unix socket connects, UDP, MPTCP, TCP fast open, raw sockets (sandbox/seccomp/).
    Seccomp,
}

impl Feature {
    pub const ALL: [Feature; 5] = [
        Feature::WriteContainment,
        Feature::Network,
        Feature::DeviceIoctls,
        Feature::Scopes,
        Feature::Seccomp,
    ];

    /// The Landlock ABI that brought it (`None` for the seccomp layer).
    pub fn abi(self) -> Option<u32> {
        match self {
            Feature::WriteContainment => Some(probe::MIN_ABI),
            Feature::Network => Some(probe::NETWORK_ABI),
            Feature::DeviceIoctls => Some(probe::IOCTL_ABI),
            Feature::Scopes => Some(probe::SCOPES_ABI),
            Feature::Seccomp => None,
        }
    }

    /// The first Linux release with it.
    pub fn linux(self) -> &'static str {
        match self {
            Feature::WriteContainment => "6.2",
            Feature::Network => "6.7",
            Feature::DeviceIoctls => "6.10",
            Feature::Scopes => "6.12",
            Feature::Seccomp => "5.6",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Feature::WriteContainment => "write containment (truncate included)",
            Feature::Network => "tcp connect and bind rules",
            Feature::DeviceIoctls => "ioctl restriction on device files",
            Feature::Scopes => "signal and abstract unix socket scopes",
            Feature::Seccomp => "seccomp layer (unix sockets, udp, tcp bypasses)",
        }
    }

    /// What the kernel must have, in words.
    pub fn needs(self) -> String {
        match self.abi() {
            Some(abi) => format!("Landlock ABI {abi}"),
            None => "seccomp user notification and pidfd_getfd".to_string(),
        }
    }
}

/// What the kernel offers, as isolate sees it (capped by `ISOLATE_LANDLOCK_ABI_MAX` and
/// `ISOLATE_NO_SECCOMP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    pub landlock_abi: Option<u32>,
    pub seccomp: bool,
}

impl Kernel {
    pub fn probe() -> Kernel {
        Kernel {
            landlock_abi: probe::landlock_abi(),
            seccomp: probe::seccomp().is_ok(),
        }
    }

    fn has(self, feature: Feature) -> bool {
        match (feature, feature.abi()) {
            // Below ABI 6 the seccomp layer holds both scopes: the broker judges every signal
            // to another process and every connect to an abstract name.
            (Feature::Scopes, _) if self.landlock_abi.is_some() && self.seccomp => true,
            (_, Some(needs)) => self.landlock_abi.is_some_and(|abi| abi >= needs),
            (_, None) => self.landlock_abi.is_some() && self.seccomp,
        }
    }
}

/// One feature, for one policy, on this kernel.
#[derive(Debug, Clone, Serialize)]
pub struct FeatureState {
    pub feature: Feature,
    pub description: &'static str,
    /// The Landlock ABI it needs (`null` for the seccomp layer).
    pub needs_abi: Option<u32>,
    /// What the kernel must have, in words.
    pub needs: String,
    /// The kernel (as capped by `ISOLATE_LANDLOCK_ABI_MAX`, `ISOLATE_NO_SECCOMP`) has it.
    pub available: bool,
    /// The policy asks for it.
    pub asked: bool,
    /// Missing, it fails the run (else it is a gap).
    pub required: bool,
    /// Asked and available: the job is held to it.
    pub enforced: bool,
}

/// Every feature, as it stands for `policy` on `kernel`.
pub fn features(policy: &Policy, kernel: Kernel) -> Vec<FeatureState> {
    let net = &policy.network;
    let scopes = &policy.scopes;
    Feature::ALL
        .iter()
        .map(|&feature| {
            let (asked, required) = match feature {
                Feature::WriteContainment => (true, true),
                Feature::Network => (
                    net.connect.allowed().is_some()
                        || net.bind.allowed().is_some()
                        || net.proxied(),
                    policy.compatibility.network == Level::Required,
                ),
                // Part of the pinned rights; older kernels leave device ioctls open (a gap).
                Feature::DeviceIoctls => (true, false),
                Feature::Scopes => (
                    scopes.signals || scopes.abstract_unix_sockets,
                    policy.compatibility.scopes == Level::Required,
                ),
                // Path-named unix sockets are always held to the rule, whatever else is open.
                Feature::Seccomp => (true, policy.compatibility.seccomp == Level::Required),
            };
            let available = kernel.has(feature);
            FeatureState {
                feature,
                description: feature.describe(),
                needs_abi: feature.abi(),
                needs: feature.needs(),
                available,
                asked,
                required,
                enforced: asked && available,
            }
        })
        .collect()
}
