//! Which bound of an import a job's repository went over (`Error::ImportOverBound`).

/// A bound of the import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportBound {
    /// The address space of a git of the import.
    Memory,
    /// The size of the pack it copies.
    Size,
}

impl std::fmt::Display for ImportBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ImportBound::Memory => "memory",
            ImportBound::Size => "size",
        })
    }
}
