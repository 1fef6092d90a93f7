//! What a job may take of the machine (`--memory`, `--cpus`, `--pids`, or a policy's or the
//! configuration's keys), as the record keeps it; supervise/cgroup enforces it.

use serde::{Deserialize, Serialize};

/// What a job may take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobLimits {
    /// Bytes of memory (swap none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
    /// Thousandths of a CPU (`--cpus 1.5`: 1500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub millicpus: Option<u64>,
    /// Processes and threads at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids: Option<u64>,
}

impl JobLimits {
    /// No limit at all.
    pub fn is_empty(&self) -> bool {
        self.memory.is_none() && self.millicpus.is_none() && self.pids.is_none()
    }

    /// Each limit of `self`, else `other`'s.
    pub fn or(self, other: JobLimits) -> JobLimits {
        JobLimits {
            memory: self.memory.or(other.memory),
            millicpus: self.millicpus.or(other.millicpus),
            pids: self.pids.or(other.pids),
        }
    }

    /// As the start line and the end say them: `memory 512 MiB, 1.5 CPUs, 256 processes`.
    pub fn shown(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = self.memory {
            parts.push(format!("memory {}", crate::words::size(m)));
        }
        if let Some(c) = self.millicpus {
            parts.push(format!("{} CPUs", c as f64 / 1000.0));
        }
        if let Some(p) = self.pids {
            parts.push(format!("{p} processes"));
        }
        parts.join(", ")
    }
}
