//! The rights each kind of path rule grants, pinned to the ABIs isolate handles (filesystem rights
//! of ABI 5, scopes of ABI 6), never "all rights" of the running kernel.

use landlock::{Access, AccessFs, BitFlags, ABI};

use crate::sandbox::plan;

/// The newest filesystem rights isolate handles (ABI 5 added device ioctls; 6 and 7 added none).
const FS_ABI: ABI = ABI::V5;
pub(super) const SCOPE_ABI: ABI = ABI::V6;

pub(super) fn fs_abi(kernel: u32) -> ABI {
    ABI::from(kernel.min(FS_ABI as u32) as i32)
}

/// The filesystem rights of each kind of path rule on a kernel with `abi`.
pub(super) fn rights(access: plan::Access, abi: u32) -> BitFlags<AccessFs> {
    let abi = fs_abi(abi);
    match access {
        plan::Access::Read => AccessFs::from_read(abi),
        plan::Access::List => BitFlags::from(AccessFs::ReadDir),
        // Writable trees get every right except making device nodes and ioctls on devices.
        plan::Access::Write => {
            AccessFs::from_all(abi)
                & !(AccessFs::MakeChar | AccessFs::MakeBlock | AccessFs::IoctlDev)
        }
        // isolate reads the worktree after the job: a FIFO there (a `.gitignore`, a ref) would
        // block every read of it.
        plan::Access::Worktree => {
            AccessFs::from_all(abi)
                & !(AccessFs::MakeChar
                    | AccessFs::MakeBlock
                    | AccessFs::IoctlDev
                    | AccessFs::MakeFifo)
        }
        plan::Access::WriteFile => {
            BitFlags::from(AccessFs::ReadFile)
                | AccessFs::WriteFile
                | (AccessFs::from_file(abi) & AccessFs::Truncate)
        }
        plan::Access::Device => {
            BitFlags::from(AccessFs::ReadFile)
                | AccessFs::WriteFile
                | (AccessFs::from_file(abi) & (AccessFs::Truncate | AccessFs::IoctlDev))
        }
        // A rule of the seccomp layer, and a path carved out of the read rules: no right.
        plan::Access::Connect | plan::Access::Deny => BitFlags::empty(),
    }
}

/// The names of the rights a path rule grants (`read_file`, `make_dir`, …), for `policy show`.
pub fn right_names(access: plan::Access, abi: u32) -> Vec<String> {
    rights(access, abi)
        .iter()
        .map(|right| snake_case(&format!("{right:?}")))
        .collect()
}

fn snake_case(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}
