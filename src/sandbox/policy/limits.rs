//! The `[limits]` section of a merged policy: resource limits for the pre-exec helper and the
//! default timeout.

use std::time::Duration;

use serde::Serialize;

/// Resource limits set in the pre-exec helper (`None`: left as inherited), and the default timeout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// RLIMIT_NOFILE.
    pub open_files: Option<u64>,
    /// RLIMIT_NPROC: note that the kernel counts every process of the user, not only the job's.
    pub processes: Option<u64>,
    /// RLIMIT_CORE, in bytes.
    pub core_size: Option<u64>,
    /// RLIMIT_AS, in bytes.
    pub address_space: Option<u64>,
    /// Wall-clock timeout when `--timeout` is not given.
    #[serde(serialize_with = "serialize_duration")]
    pub timeout: Option<Duration>,
    /// The job's cgroup's limits when `--memory`, `--cpus`, `--pids` are not given.
    pub cgroup: crate::job::record::JobLimits,
}

fn serialize_duration<S: serde::Serializer>(
    d: &Option<Duration>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_str(&humantime::format_duration(*d).to_string()),
        None => s.serialize_none(),
    }
}
