//! The sandbox, in the stages a rule goes through: the `Policy` the user wrote (policy/), the `Plan`
//! with every path resolved for one job (plan/), the Landlock ruleset the kernel enforces
//! (landlock/), applied by the pre-exec helper (exec/), beside the seccomp filter (seccomp/) and,
//! in interactive mode, the terminal monitor the helper becomes (monitor.rs); probe.rs asks the
//! kernel what it has. The supervisor itself is never restricted: only the helper process that
//! becomes CMD is.

pub mod agent;
pub mod caches;
pub mod credentials;
pub mod exec;
pub mod handover;
pub mod landlock;
pub mod made;
pub mod monitor;
pub mod namespaces;
pub mod notify;
pub mod plan;
pub mod policy;
pub mod probe;
pub mod seccomp;
pub mod seed;

use crate::error::Error;

/// What `map_err` takes to turn a failure of the setup step `step` into the error saying so.
pub(crate) fn step_failed<E>(step: impl Into<String>) -> impl FnOnce(E) -> Error
where
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let step = step.into();
    move |source| Error::SandboxStep {
        step,
        source: source.into(),
    }
}
