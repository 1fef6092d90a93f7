//! The check that fails a run closed: every feature a policy requires must be on this kernel, or
//! the run stops before anything is made, saying what is missing and what to do. Never lets a
//! required feature through as a gap.

use super::{features, Feature, Kernel};
use crate::error::{Error, Result};
use crate::sandbox::policy::Loaded;
use crate::sandbox::probe;

/// Fails closed: the kernel's ABI when it can enforce everything `loaded` requires, else the
/// missing feature, what the kernel has and what to do.
pub fn check_kernel(loaded: &Loaded) -> Result<u32> {
    check(loaded, Kernel::probe())
}

pub(super) fn check(loaded: &Loaded, kernel: Kernel) -> Result<u32> {
    let Some(abi) = kernel.landlock_abi else {
        return Err(Error::SandboxUnavailable(format!(
            "Landlock is not enabled on this kernel ({})",
            probe::remedy()
        )));
    };
    for state in features(&loaded.policy, kernel) {
        if !state.asked || !state.required || state.available {
            continue;
        }
        let needs = match state.needs_abi {
            Some(needs) => needs,
            None => {
                return Err(Error::SeccompUnavailable {
                    policy: loaded.name.clone(),
                    why: probe::seccomp().err().unwrap_or("Landlock is missing"),
                })
            }
        };
        if state.feature == Feature::WriteContainment {
            return Err(Error::SandboxUnavailable(format!(
                "write containment needs Landlock ABI {} or newer; this kernel has ABI {abi}",
                probe::MIN_ABI
            )));
        }
        return Err(Error::FeatureUnavailable {
            policy: loaded.name.clone(),
            feature: state.description,
            needs,
            linux: state.feature.linux(),
            abi,
            key: match state.feature {
                Feature::Network => "network",
                _ => "scopes",
            },
        });
    }
    Ok(abi)
}
