//! A classic BPF interpreter for the tests: it checks a seccomp program as the kernel does when it
//! takes one (`bpf_check_classic` and `seccomp_check_filter`: a length the kernel accepts, every
//! jump inside the program, aligned loads inside `seccomp_data`, a return last) and runs it on one
//! call, as the kernel would. It knows the instructions seccomp programs built here and by
//! libseccomp use, and fails the test on any other.

use libc::sock_filter;

/// A system call as the filter sees it (`struct seccomp_data`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Call {
    pub(super) nr: u32,
    pub(super) arch: u32,
    pub(super) args: [u64; 6],
}

impl Call {
    /// The 32-bit word at `offset` (4-aligned, below 64) of the call's `seccomp_data`.
    fn word(&self, offset: u32) -> u32 {
        let field = |value: u64| {
            let high = (offset % 8 == 4) == cfg!(target_endian = "little");
            if high {
                (value >> 32) as u32
            } else {
                value as u32
            }
        };
        match offset {
            0 => self.nr,
            4 => self.arch,
            // The instruction pointer: no rule here reads it.
            8 | 12 => 0,
            _ => field(self.args[(offset as usize - 16) / 8]),
        }
    }
}

const LOAD: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const AND: u16 = (libc::BPF_ALU | libc::BPF_AND | libc::BPF_K) as u16;
const JA: u16 = (libc::BPF_JMP | libc::BPF_JA) as u16;
const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JGT: u16 = (libc::BPF_JMP | libc::BPF_JGT | libc::BPF_K) as u16;
const JGE: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const JSET: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

/// What the kernel would refuse of `program`, if anything.
pub(super) fn check(program: &[sock_filter]) -> Result<(), String> {
    if program.is_empty() || program.len() > libc::BPF_MAXINSNS as usize {
        return Err(format!("{} instructions", program.len()));
    }
    for (pc, i) in program.iter().enumerate() {
        let inside = |offset: u64| pc as u64 + 1 + offset < program.len() as u64;
        let ok = match i.code {
            LOAD => i.k % 4 == 0 && i.k < 64,
            AND | RET => true,
            JA => inside(u64::from(i.k)),
            JEQ | JGT | JGE | JSET => inside(u64::from(i.jt)) && inside(u64::from(i.jf)),
            _ => false,
        };
        if !ok {
            return Err(format!(
                "instruction {pc}: {:#x} {} {} {:#x}",
                i.code, i.jt, i.jf, i.k
            ));
        }
    }
    match program.last() {
        Some(last) if last.code == RET => Ok(()),
        _ => Err("the program does not end with a return".into()),
    }
}

/// What `program` (checked) returns for `call`.
pub(super) fn run(program: &[sock_filter], call: &Call) -> u32 {
    let mut a = 0u32;
    let mut pc = 0usize;
    loop {
        let i = &program[pc];
        pc += 1;
        let taken = |cond: bool| usize::from(if cond { i.jt } else { i.jf });
        match i.code {
            LOAD => a = call.word(i.k),
            AND => a &= i.k,
            JA => pc += i.k as usize,
            JEQ => pc += taken(a == i.k),
            JGT => pc += taken(a > i.k),
            JGE => pc += taken(a >= i.k),
            JSET => pc += taken(a & i.k != 0),
            RET => return i.k,
            code => panic!("instruction {code:#x} at {}", pc - 1),
        }
    }
}
