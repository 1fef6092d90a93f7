//! The compiler of bpf.rs against a model of what its rules mean, on the interpreter: the ABI
//! checks, 64-bit comparisons, which of several matching rules decides, jumps longer than cBPF's
//! 8-bit offsets, and the kernel's length limit.

use super::assembler::AssemblyError;
use super::bpf::{ArgCmp, CmpOp, Filter, FilterAction, FilterError, Syscall, AUDIT_ARCH};
use super::interpreter::{check, run, Call};

const KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;
const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

fn sys(nr: libc::c_long) -> Syscall {
    Syscall::native(nr).unwrap()
}

fn call(nr: u32, args: [u64; 6]) -> Call {
    Call {
        nr,
        arch: AUDIT_ARCH,
        args,
    }
}

/// The program of `filter`, checked as the kernel would.
fn compiled(filter: &Filter) -> Vec<libc::sock_filter> {
    let program = filter.compile().unwrap();
    check(&program).unwrap();
    program
}

fn holds(c: &ArgCmp, args: &[u64; 6]) -> bool {
    let a = args[c.arg as usize];
    match c.op {
        CmpOp::Equal => a == c.value,
        CmpOp::NotEqual => a != c.value,
        CmpOp::Greater => a > c.value,
        CmpOp::MaskedEqual(mask) => a & mask == c.value & mask,
    }
}

/// What the rules mean: of those for the call whose every comparison holds, the strongest action,
/// the first added among equals; else the default.
fn model(rules: &[(FilterAction, u32, Vec<ArgCmp>)], default: FilterAction, call: &Call) -> u32 {
    if call.arch != AUDIT_ARCH {
        return KILL;
    }
    if cfg!(target_arch = "x86_64") && call.nr >= 0x4000_0000 && call.nr != u32::MAX {
        return KILL;
    }
    rules
        .iter()
        .filter(|(_, nr, conditions)| {
            *nr == call.nr && conditions.iter().all(|c| holds(c, &call.args))
        })
        .min_by_key(|(action, _, _)| action.strength())
        .map_or(default.value(), |(action, _, _)| action.value())
}

fn filter_of(rules: &[(FilterAction, u32, Vec<ArgCmp>)]) -> Filter {
    let mut filter = Filter::new(FilterAction::Allow);
    for (action, nr, conditions) in rules {
        filter
            .add_rule_conditional(*action, sys(*nr as libc::c_long), conditions)
            .unwrap();
    }
    filter
}

/// A small deterministic generator (xorshift64*), so that a failure replays.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<T: Copy>(&mut self, of: &[T]) -> T {
        of[self.below(of.len() as u64) as usize]
    }
}

/// Values where 64-bit comparisons done on two 32-bit words go wrong if done carelessly.
const EDGES: [u64; 14] = [
    0,
    1,
    2,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fffe,
    0xffff_ffff,
    0x1_0000_0000,
    0x1_0000_0001,
    0x1_ffff_ffff,
    0xffff_ffff_0000_0000,
    0xffff_ffff_0000_0002,
    u64::MAX - 1,
    u64::MAX,
];

#[test]
fn another_abi_is_killed_and_a_skipped_call_is_not() {
    let program = compiled(&filter_of(&[(FilterAction::Errno(1), 3, vec![])]));
    for arch in [0, 0x4000_0003, 0xc000_003e, 0xc000_00b7, 0xc000_00f3] {
        let expected = if arch == AUDIT_ARCH { ALLOW } else { KILL };
        assert_eq!(
            run(
                &program,
                &Call {
                    arch,
                    ..call(0, [0; 6])
                }
            ),
            expected,
            "{arch:#x}"
        );
    }
    assert_eq!(run(&program, &call(3, [0; 6])), libc::SECCOMP_RET_ERRNO | 1);
    // x32 numbers the calls with bit 30 set (x86_64's own filter must refuse them), and -1 is a
    // call a tracer skipped, filtered again.
    let x32 = if cfg!(target_arch = "x86_64") {
        KILL
    } else {
        ALLOW
    };
    for nr in [
        0x4000_0000,
        0x4000_0003,
        0x7fff_ffff,
        0x8000_0000,
        u32::MAX - 1,
    ] {
        assert_eq!(run(&program, &call(nr, [0; 6])), x32, "{nr:#x}");
    }
    assert_eq!(run(&program, &call(u32::MAX, [0; 6])), ALLOW);
    assert_eq!(run(&program, &call(0x3fff_ffff, [0; 6])), ALLOW);
}

#[test]
fn an_empty_filter_allows_everything_of_this_abi() {
    let program = compiled(&Filter::new(FilterAction::Allow));
    for nr in [0, 1, 511, 0x3fff_ffff, u32::MAX] {
        assert_eq!(run(&program, &call(nr, [u64::MAX; 6])), ALLOW);
    }
}

#[test]
fn arguments_are_compared_on_all_64_bits() {
    let ops = |value: u64| {
        [
            CmpOp::Equal,
            CmpOp::NotEqual,
            CmpOp::Greater,
            CmpOp::MaskedEqual(0xffff_ffff),
            CmpOp::MaskedEqual(0xf),
            CmpOp::MaskedEqual(0xffff_ffff_0000_0000),
            CmpOp::MaskedEqual(0x1_0000_00f0),
            CmpOp::MaskedEqual(value),
            CmpOp::MaskedEqual(0),
        ]
    };
    for value in EDGES {
        for op in ops(value) {
            for arg in [0, 3, 5] {
                let rules = [(
                    FilterAction::Errno(7),
                    16,
                    vec![ArgCmp::new(arg, op, value)],
                )];
                let program = compiled(&filter_of(&rules));
                for a in EDGES.iter().chain(&[value, value ^ 1, value ^ (1 << 32)]) {
                    let mut args = [0x5555_5555_5555_5555; 6];
                    args[arg as usize] = *a;
                    let call = call(16, args);
                    assert_eq!(
                        run(&program, &call),
                        model(&rules, FilterAction::Allow, &call),
                        "arg{arg} {a:#x} {op:?} {value:#x}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_stronger_action_decides_whatever_the_order() {
    let holds = |arg| vec![ArgCmp::new(arg, CmpOp::Equal, 1)];
    let notify = (FilterAction::Notify, 42, holds(0));
    let refuse = (FilterAction::Errno(libc::EACCES), 42, holds(1));
    let kill = (FilterAction::KillProcess, 42, holds(2));
    let succeed = (FilterAction::Errno(0), 42, holds(1));
    let everything = (FilterAction::Notify, 42, vec![]);
    for rules in [
        vec![notify.clone(), refuse.clone(), kill.clone()],
        vec![kill.clone(), refuse.clone(), notify.clone()],
        vec![refuse.clone(), succeed.clone(), everything.clone()],
        vec![everything.clone(), succeed.clone(), refuse.clone()],
    ] {
        let program = compiled(&filter_of(&rules));
        for a in 0..8u64 {
            let args = [a & 1, a >> 1 & 1, a >> 2 & 1, 0, 0, 0];
            let call = call(42, args);
            assert_eq!(
                run(&program, &call),
                model(&rules, FilterAction::Allow, &call),
                "{args:?} {rules:?}"
            );
        }
    }
    // Spelled out: an errno over a notification, the first of two errnos.
    let program = compiled(&filter_of(&[notify, refuse, succeed]));
    let both = call(42, [1, 1, 0, 0, 0, 0]);
    assert_eq!(
        run(&program, &both),
        libc::SECCOMP_RET_ERRNO | libc::EACCES as u32
    );
}

/// Random rule sets against the model: calls scattered over the numbers (the search), several
/// rules per call with every comparison and action, arguments at and around the rules' values.
#[test]
fn random_filters_do_what_their_rules_say() {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let actions = [
        FilterAction::Errno(0),
        FilterAction::Errno(1),
        FilterAction::Errno(libc::ENOSYS),
        FilterAction::Notify,
        FilterAction::KillProcess,
        FilterAction::Allow,
    ];
    for _ in 0..60 {
        let calls: Vec<u32> = (0..1 + random.below(40))
            .map(|_| {
                let near: u32 =
                    random.pick(&[0, 1, 2, 3, 41, 42, 43, 100, 255, 256, 469, 511, 0x3fff_ffff]);
                near.saturating_sub(random.below(3) as u32)
            })
            .collect();
        let mut rules = Vec::new();
        for _ in 0..1 + random.below(60) {
            let nr = random.pick(&calls);
            let conditions: Vec<ArgCmp> = (0..random.below(4))
                .map(|_| {
                    let value = random.pick(&EDGES) ^ random.below(4);
                    let op = match random.below(5) {
                        0 => CmpOp::Equal,
                        1 => CmpOp::NotEqual,
                        2 => CmpOp::Greater,
                        _ => CmpOp::MaskedEqual(random.pick(&EDGES) | random.below(16)),
                    };
                    ArgCmp::new(random.below(6) as u32, op, value)
                })
                .collect();
            rules.push((random.pick(&actions), nr, conditions));
        }
        let program = compiled(&filter_of(&rules));
        let values: Vec<u64> = rules
            .iter()
            .flat_map(|(_, _, c)| c.iter().map(|c| c.value))
            .chain(EDGES)
            .flat_map(|v| [v, v.wrapping_add(1), v.wrapping_sub(1), v ^ (1 << 32)])
            .collect();
        for nr in calls
            .iter()
            .flat_map(|&nr| [nr.saturating_sub(1), nr, nr + 1])
        {
            for _ in 0..200 {
                let args = [(); 6].map(|_| random.pick(&values));
                let call = call(nr, args);
                assert_eq!(
                    run(&program, &call),
                    model(&rules, FilterAction::Allow, &call),
                    "{call:?} under {rules:?}"
                );
            }
        }
    }
}

/// A block of rules longer than a conditional jump reaches: the jumps past it go through
/// unconditional ones, and every rule still decides for its own value.
#[test]
fn jumps_reach_past_255_instructions() {
    let mut rules = Vec::new();
    for n in 0..300u64 {
        let errno = (n % 200 + 1) as i32;
        let value = n << 20 | 0x5401;
        rules.push((
            FilterAction::Errno(errno),
            16,
            vec![ArgCmp::new(1, CmpOp::MaskedEqual(0xffff_ffff), value)],
        ));
    }
    rules.push((FilterAction::Errno(99), 15, vec![]));
    rules.push((FilterAction::Errno(98), 17, vec![]));
    rules.push((
        FilterAction::Notify,
        300,
        vec![ArgCmp::new(0, CmpOp::Greater, 1 << 40)],
    ));
    let program = compiled(&filter_of(&rules));
    assert!(program.len() > 600, "{}", program.len());
    // Only the jumps past the block are unconditional here.
    let ja = (libc::BPF_JMP | libc::BPF_JA) as u16;
    assert!(program.iter().any(|i| i.code == ja && i.k > 255));
    for n in 0..310u64 {
        for high in [0, 1 << 32] {
            let call = call(16, [0, high | n << 20 | 0x5401, 0, 0, 0, 0]);
            assert_eq!(
                run(&program, &call),
                model(&rules, FilterAction::Allow, &call)
            );
        }
    }
    for nr in 0..320 {
        for arg in [0, 1 << 40, (1 << 40) + 1] {
            let call = call(nr, [arg, 0x5401, 0, 0, 0, 0]);
            assert_eq!(
                run(&program, &call),
                model(&rules, FilterAction::Allow, &call)
            );
        }
    }
}

#[test]
fn a_program_past_the_kernels_limit_is_refused() {
    let mut filter = Filter::new(FilterAction::Allow);
    for n in 0..2000u64 {
        let equal = [ArgCmp::new(0, CmpOp::Equal, n)];
        filter
            .add_rule_conditional(FilterAction::Errno(1), sys(16), &equal)
            .unwrap();
    }
    let too_long = filter.compile();
    assert!(matches!(too_long, Err(FilterError::Assembly(AssemblyError::TooLong(n))) if n > 4096));
}

#[test]
fn what_the_kernel_cannot_express_is_refused_when_added() {
    let mut filter = Filter::new(FilterAction::Allow);
    assert!(Syscall::native(-1).is_err());
    assert!(Syscall::native(0x4000_0000).is_err());
    let errno = filter.add_rule(FilterAction::Errno(0x1_0000), sys(1));
    assert!(matches!(errno, Err(FilterError::Errno(0x1_0000))));
    let seventh = [ArgCmp::new(6, CmpOp::Equal, 0)];
    let argument = filter.add_rule_conditional(FilterAction::Errno(1), sys(1), &seventh);
    assert!(matches!(argument, Err(FilterError::Argument(6))));
}
