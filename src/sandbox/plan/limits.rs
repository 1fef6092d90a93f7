//! The resource limits of a plan: what the policy's `[limits]` become for the pre-exec helper,
//! which sets each soft and hard. A limit only ever lowers what isolate inherited.

use serde::{Deserialize, Serialize};

use crate::sandbox::policy::Limits;

/// A resource limit of the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    pub resource: Resource,
    pub value: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    OpenFiles,
    Processes,
    CoreSize,
    AddressSpace,
}

/// The policy's resource limits, those it sets.
pub(super) fn limits(limits: &Limits) -> Vec<Limit> {
    [
        (Resource::OpenFiles, limits.open_files),
        (Resource::Processes, limits.processes),
        (Resource::CoreSize, limits.core_size),
        (Resource::AddressSpace, limits.address_space),
    ]
    .into_iter()
    .filter_map(|(resource, value)| value.map(|value| Limit { resource, value }))
    .collect()
}
