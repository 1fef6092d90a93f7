//! The sandbox part of a record: what confined the job, its gaps, what the seccomp layer's broker
//! and the network proxy refused it.

use serde::{Deserialize, Serialize};

/// What confined a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxReport {
    /// True when Landlock restricted the job (false only with --no-sandbox).
    pub enforced: bool,
    /// The kernel's Landlock ABI, when it has Landlock.
    pub landlock_abi: Option<u32>,
    /// The sandbox's tier: `namespaces` or `landlock` (docs/sandbox.md, "Tiers"); absent
    /// unsandboxed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    /// The policy's name (`narrowed by` another on `--resume --policy`).
    pub policy: String,
    /// What loads the policy again (its profile name, or its file's canonical path): `merge`, `sync`
    /// and `--resume` run what is in the job's worktree under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_ref: Option<String>,
    /// Every place the sandbox does not reach, as data (docs/sandbox.md, "Gaps").
    pub gaps: Vec<String>,
    /// The writable paths `--allow-write` added, canonical.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_write: Vec<String>,
    /// What the seccomp layer's broker refused the job (set when the job ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<Refused>,
}

impl SandboxReport {
    /// The Landlock ABI that confined the job; `None` when nothing did (`--no-sandbox`).
    pub fn confined_by(&self) -> Option<u32> {
        self.landlock_abi.filter(|_| self.enforced)
    }

    /// What confined the job, as the start line and `status` say it: `landlock ABI 7, policy
    /// default`; `None` unsandboxed.
    pub fn summary(&self) -> Option<String> {
        let abi = self.confined_by()?;
        let tier = match self.tier {
            Some(Tier::Namespaces) => ", namespaces",
            Some(Tier::Landlock) => ", Landlock-only tier",
            None => "",
        };
        Some(format!("landlock ABI {abi}{tier}, policy {}", self.policy))
    }
}

/// Which sandbox a job runs in (docs/sandbox.md, "Tiers").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Landlock and the seccomp layer, plus namespaces of the job's own.
    Namespaces,
    /// Landlock and the seccomp layer alone.
    Landlock,
}

impl Tier {
    /// The tier's name, as the record and `doctor` write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Namespaces => "namespaces",
            Tier::Landlock => "landlock",
        }
    }
}

/// Calls of the job the seccomp layer's broker refused, by kind. (What the filter refuses by a call's
/// arguments alone, such as a raw socket, the kernel answers without isolate seeing it.)
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refused {
    /// Connects to unix sockets served from outside the job (path-named or abstract).
    pub unix_connect: u64,
    /// TCP connects to a port the policy does not allow.
    pub tcp_connect: u64,
    /// listen() on a TCP socket that was never bound, where TCP bind is restricted.
    pub listen: u64,
    /// System V IPC and POSIX message queue calls, where the job has no IPC namespace of its own.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ipc: u64,
    /// Calls naming a process that is not the job's (its priority, scheduling, affinity).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub process: u64,
    /// The first unix sockets and TCP destinations the broker refused (a socket's path, or
    /// `address:port`), at most 5, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first: Vec<String>,
    /// What the job's network proxy decided, when a domain allowlist applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkCounts>,
}

/// The decisions of a job's network proxy (its domain allowlist): every one is a line of the job's
/// `net.log` (`isolate logs --net`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkCounts {
    /// Requests the proxy let through.
    pub allowed: u64,
    /// Requests it refused (403: a name not allowed, a local address; 407; malformed requests).
    pub refused: u64,
    /// Requests it allowed whose destination could not be reached (a name that does not resolve,
    /// a connect that failed: 502), apart from the refusals.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: u64,
    /// The first destinations it refused (`host:port`), at most 5, each once.
    #[serde(default)]
    pub first_refused: Vec<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
