//! A seccomp filter compiled to classic BPF in Rust: rules of the shape libseccomp takes (an action
//! for a system call, or for a system call whose arguments pass a few comparisons) made into the
//! `struct sock_filter` program that `seccomp(SECCOMP_SET_MODE_FILTER)` installs
//! (Documentation/userspace-api/seccomp_filter.rst; the instruction set is
//! Documentation/networking/filter.rst). It owns the program's shape: the check of the calling
//! ABI, each call's rules, arguments compared as two 32-bit words; search.rs makes the search on
//! the system call number and assembler.rs lays the instructions out. It never loads a filter and
//! never lets the order the rules were added in weaken one: where rules for one call both match,
//! the stronger action decides.
//!
//! The program, in the order the kernel runs it:
//!
//! 1. `seccomp_data.arch` is this build's `AUDIT_ARCH_*`, else the process is killed: another ABI
//!    (i386 on x86_64, arm32 on aarch64) numbers its calls differently, past every rule. On
//!    x86_64 an x32 call (number with `__X32_SYSCALL_BIT`) is killed too, but number -1, which a
//!    tracer sets to skip a call and the kernel then filters again.
//! 2. A binary search on the number leads to the rules of that call, or to the default action.
//! 3. A call's rules, strongest action first (as the kernel ranks the actions of stacked filters:
//!    kill, errno, user notification, allow), each a chain of comparisons; the first rule all of
//!    whose comparisons hold returns its action, and when none does the default decides.
//!
//! libseccomp picks among such rules by the order it sorts their comparisons in (the highest
//! argument first), refuses some pairs (`EEXIST`), and lets a rule without comparisons replace a
//! call's others whatever their actions. The filter's rules have no pair whose actions differ
//! where both match: tests.rs runs this program beside libseccomp's of the same rules to show
//! they agree.

use std::mem::offset_of;

use super::assembler::{Assembler, AssemblyError, Cmp, Label};
use super::search::Search;

/// `AUDIT_ARCH_*` of the ABI this build's system call numbers are (linux/audit.h:
/// `EM_*` | `__AUDIT_ARCH_64BIT` | `__AUDIT_ARCH_LE`).
#[cfg(target_arch = "x86_64")]
pub(super) const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
pub(super) const AUDIT_ARCH: u32 = 0xc000_00b7;
#[cfg(target_arch = "riscv64")]
pub(super) const AUDIT_ARCH: u32 = 0xc000_00f3;
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
compile_error!("isolate's seccomp filter knows the ABIs of x86_64, aarch64 and riscv64 only");

/// x32 calls come through x86_64's entry with this bit set in their number
/// (arch/x86/include/uapi/asm/unistd.h).
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Why no program could be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FilterError {
    #[error("{0} is no system call number of this architecture")]
    Syscall(libc::c_long),
    #[error("system calls have six arguments; there is no argument {0}")]
    Argument(u32),
    #[error("errno {0} does not fit a seccomp return value")]
    Errno(i32),
    #[error(transparent)]
    Assembly(#[from] AssemblyError),
}

/// What the kernel does with a call (the filter's return value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FilterAction {
    /// The call proceeds.
    Allow,
    /// The call fails with this errno, unmade (0: it returns 0, unmade).
    Errno(i32),
    /// The whole process is killed (`SIGSYS`).
    KillProcess,
    /// The call waits for the listener's answer (`SECCOMP_RET_USER_NOTIF`); with no listener the
    /// kernel fails it with `ENOSYS`.
    Notify,
}

impl FilterAction {
    /// The 32-bit value the program returns.
    pub(super) fn value(self) -> u32 {
        match self {
            FilterAction::Allow => libc::SECCOMP_RET_ALLOW,
            // Checked when the rule was added: 0..=0xffff.
            FilterAction::Errno(errno) => libc::SECCOMP_RET_ERRNO | (errno as u32 & 0xffff),
            FilterAction::KillProcess => libc::SECCOMP_RET_KILL_PROCESS,
            FilterAction::Notify => libc::SECCOMP_RET_USER_NOTIF,
        }
    }

    /// Lower is stronger: the action part of the value as a signed number, the order in which
    /// the kernel lets one filter's action override another's (`seccomp_run_filters`).
    pub(super) fn strength(self) -> i32 {
        (self.value() & libc::SECCOMP_RET_ACTION_FULL) as i32
    }
}

/// How an argument is compared with a value; all on the full 64-bit register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Equal,
    NotEqual,
    /// Unsigned.
    Greater,
    /// `argument & mask == value & mask`.
    MaskedEqual(u64),
}

/// One comparison of a rule: argument `arg` (0 to 5) against `value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ArgCmp {
    pub(super) arg: u32,
    pub(super) op: CmpOp,
    pub(super) value: u64,
}

impl ArgCmp {
    pub(crate) fn new(arg: u32, op: CmpOp, value: u64) -> ArgCmp {
        ArgCmp { arg, op, value }
    }
}

/// A native system call number (this build's ABI, libc's `SYS_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Syscall(u32);

impl Syscall {
    pub(crate) fn native(nr: libc::c_long) -> Result<Syscall, FilterError> {
        // Numbers at x32's bit and above are never native (and never reach the rules).
        match u32::try_from(nr) {
            Ok(n) if n < 0x4000_0000 => Ok(Syscall(n)),
            _ => Err(FilterError::Syscall(nr)),
        }
    }

    #[cfg(test)]
    pub(super) fn number(self) -> u32 {
        self.0
    }
}

/// One rule: `action` for `syscall` when every comparison holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rule {
    pub(super) syscall: Syscall,
    pub(super) action: FilterAction,
    pub(super) conditions: Vec<ArgCmp>,
}

/// The rules of a filter, in the order added, and the action for every call none matches.
#[derive(Debug, Clone)]
pub(crate) struct Filter {
    default: FilterAction,
    rules: Vec<Rule>,
}

impl Filter {
    pub(crate) fn new(default: FilterAction) -> Filter {
        Filter {
            default,
            rules: Vec::new(),
        }
    }

    /// `action` for every call of `syscall`.
    pub(crate) fn add_rule(
        &mut self,
        action: FilterAction,
        syscall: Syscall,
    ) -> Result<(), FilterError> {
        self.add_rule_conditional(action, syscall, &[])
    }

    /// `action` for the calls of `syscall` whose arguments pass every comparison of `conditions`.
    pub(crate) fn add_rule_conditional(
        &mut self,
        action: FilterAction,
        syscall: Syscall,
        conditions: &[ArgCmp],
    ) -> Result<(), FilterError> {
        if let FilterAction::Errno(errno) = action {
            if !(0..=0xffff).contains(&errno) {
                return Err(FilterError::Errno(errno));
            }
        }
        if let Some(c) = conditions.iter().find(|c| c.arg > 5) {
            return Err(FilterError::Argument(c.arg));
        }
        self.rules.push(Rule {
            syscall,
            action,
            conditions: conditions.to_vec(),
        });
        Ok(())
    }

    #[cfg(test)]
    pub(super) fn default_action(&self) -> FilterAction {
        self.default
    }

    #[cfg(test)]
    pub(super) fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The program, as the kernel takes it.
    pub(crate) fn compile(&self) -> Result<Vec<libc::sock_filter>, FilterError> {
        let mut asm = Assembler::default();
        let default = asm.label();
        let (blocks, search) = self.blocks(&mut asm, default);
        let root = search.root(&mut asm);
        abi(&mut asm, root);
        search.place(&mut asm, root);
        asm.mark(default);
        asm.ret(self.default.value());
        for (rules, label) in &blocks {
            asm.mark(*label);
            for rule in rules {
                let next = asm.label();
                for condition in &rule.conditions {
                    let holds = asm.label();
                    compare(&mut asm, condition, holds, next);
                    asm.mark(holds);
                }
                asm.ret(rule.action.value());
                asm.mark(next);
            }
            asm.ret(self.default.value());
        }
        Ok(asm.assemble()?)
    }

    /// Each call's rules, strongest action first (a stable sort: among equals, the first added),
    /// one block (and label) for all the calls with the same rules; and where each number leads.
    fn blocks(&self, asm: &mut Assembler, default: Label) -> (Vec<(Vec<&Rule>, Label)>, Search) {
        let mut calls: Vec<Syscall> = self.rules.iter().map(|r| r.syscall).collect();
        calls.sort();
        calls.dedup();
        let mut blocks: Vec<(Vec<&Rule>, Label)> = Vec::new();
        let mut search = Search::new(default);
        for call in calls {
            let mut rules: Vec<&Rule> = self.rules.iter().filter(|r| r.syscall == call).collect();
            rules.sort_by_key(|r| r.action.strength());
            let same = |other: &[&Rule]| {
                other.len() == rules.len()
                    && other
                        .iter()
                        .zip(&rules)
                        .all(|(a, b)| a.action == b.action && a.conditions == b.conditions)
            };
            let label = match blocks.iter().find(|(other, _)| same(other)) {
                Some((_, label)) => *label,
                None => {
                    let label = asm.label();
                    blocks.push((rules, label));
                    label
                }
            };
            search.add(call.0, label);
        }
        (blocks, search)
    }
}

/// The program's start: a call of another ABI kills the process, one of this ABI goes to
/// `search` with its number in the accumulator.
fn abi(asm: &mut Assembler, search: Label) {
    let kill = asm.label();
    let native = asm.label();
    asm.load(offset_of!(libc::seccomp_data, arch) as u32);
    asm.jump(Cmp::Eq, AUDIT_ARCH, native, kill);
    #[cfg(not(target_arch = "x86_64"))]
    {
        asm.mark(kill);
        asm.ret(FilterAction::KillProcess.value());
    }
    asm.mark(native);
    asm.load(offset_of!(libc::seccomp_data, nr) as u32);
    #[cfg(target_arch = "x86_64")]
    {
        let x32 = asm.label();
        asm.jump(Cmp::Ge, X32_SYSCALL_BIT, x32, search);
        asm.mark(x32);
        asm.jump(Cmp::Eq, u32::MAX, search, kill);
        asm.mark(kill);
        asm.ret(FilterAction::KillProcess.value());
    }
    #[cfg(not(target_arch = "x86_64"))]
    asm.goto(search);
}

/// Where argument `arg`'s (high, low) 32-bit words are in `seccomp_data`.
fn words(arg: u32) -> (u32, u32) {
    let at = (offset_of!(libc::seccomp_data, args) + 8 * arg as usize) as u32;
    if cfg!(target_endian = "little") {
        (at + 4, at)
    } else {
        (at, at + 4)
    }
}

/// Code that goes to `holds` when `c` holds of the call's argument, else to `fails`. cBPF's
/// accumulator is 32 bits wide: each comparison is made on the high word, then the low one.
fn compare(asm: &mut Assembler, c: &ArgCmp, holds: Label, fails: Label) {
    let (high, low) = words(c.arg);
    let (value_high, value_low) = ((c.value >> 32) as u32, c.value as u32);
    match c.op {
        CmpOp::Equal => equal(
            asm,
            &[(high, u32::MAX, value_high), (low, u32::MAX, value_low)],
            holds,
            fails,
        ),
        CmpOp::NotEqual => equal(
            asm,
            &[(high, u32::MAX, value_high), (low, u32::MAX, value_low)],
            fails,
            holds,
        ),
        CmpOp::MaskedEqual(mask) => {
            let (mask_high, mask_low) = ((mask >> 32) as u32, mask as u32);
            let words = [
                (high, mask_high, value_high & mask_high),
                (low, mask_low, value_low & mask_low),
            ];
            // A word the mask leaves nothing of always matches.
            let words: Vec<_> = words.into_iter().filter(|&(_, m, _)| m != 0).collect();
            equal(asm, &words, holds, fails)
        }
        CmpOp::Greater => {
            // Greater when the high word is, or when it is equal and the low word is greater.
            let high_equal = asm.label();
            let low_word = asm.label();
            asm.load(high);
            asm.jump(Cmp::Gt, value_high, holds, high_equal);
            asm.mark(high_equal);
            asm.jump(Cmp::Eq, value_high, low_word, fails);
            asm.mark(low_word);
            asm.load(low);
            asm.jump(Cmp::Gt, value_low, holds, fails);
        }
    }
}

/// Code that goes to `equal` when every (offset, mask, value) word of the call is `value` once
/// masked, else to `differs`.
fn equal(asm: &mut Assembler, words: &[(u32, u32, u32)], equal: Label, differs: Label) {
    let Some((last, before)) = words.split_last() else {
        asm.goto(equal);
        return;
    };
    for &(offset, mask, value) in before {
        let next = asm.label();
        asm.load_masked(offset, mask);
        asm.jump(Cmp::Eq, value, next, differs);
        asm.mark(next);
    }
    let &(offset, mask, value) = last;
    asm.load_masked(offset, mask);
    asm.jump(Cmp::Eq, value, equal, differs);
}
