//! Classic BPF with named jumps: instructions whose jumps name labels, laid out into the
//! `struct sock_filter` array the kernel takes (Documentation/networking/filter.rst). It owns
//! the offsets: cBPF jumps only forward, a conditional jump at most 255 instructions, and a
//! program holds at most 4096. It knows nothing of what the program decides.

/// The most instructions the kernel takes in one program (`BPF_MAXINSNS`).
const MAX_INSTRUCTIONS: usize = libc::BPF_MAXINSNS as usize;

/// Why instructions could not be laid out.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AssemblyError {
    #[error("the filter needs {0} instructions; the kernel takes at most {MAX_INSTRUCTIONS}")]
    TooLong(usize),
    #[error("the filter's jump {0} leads backwards or nowhere")]
    Jump(usize),
}

/// A place in the program, known once the program is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Label(usize);

/// A conditional jump's test of the accumulator against a constant.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cmp {
    Eq,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy)]
enum Instruction {
    /// The 32-bit word at this offset of `seccomp_data` into the accumulator.
    Load(u32),
    /// The accumulator masked.
    And(u32),
    /// To `yes` if the accumulator passes the test against `k`, else to `no`.
    Jump {
        cmp: Cmp,
        k: u32,
        yes: Label,
        no: Label,
    },
    Goto(Label),
    Return(u32),
    /// Where a label is: no instruction.
    Mark(Label),
}

/// Instructions whose jumps name labels; `assemble` lays them out.
#[derive(Default)]
pub(super) struct Assembler {
    code: Vec<Instruction>,
    labels: usize,
}

impl Assembler {
    pub(super) fn label(&mut self) -> Label {
        self.labels += 1;
        Label(self.labels - 1)
    }

    pub(super) fn mark(&mut self, label: Label) {
        self.code.push(Instruction::Mark(label));
    }

    pub(super) fn load(&mut self, offset: u32) {
        self.code.push(Instruction::Load(offset));
    }

    pub(super) fn load_masked(&mut self, offset: u32, mask: u32) {
        self.load(offset);
        if mask != u32::MAX {
            self.code.push(Instruction::And(mask));
        }
    }

    pub(super) fn jump(&mut self, cmp: Cmp, k: u32, yes: Label, no: Label) {
        self.code.push(Instruction::Jump { cmp, k, yes, no });
    }

    pub(super) fn goto(&mut self, to: Label) {
        self.code.push(Instruction::Goto(to));
    }

    pub(super) fn ret(&mut self, value: u32) {
        self.code.push(Instruction::Return(value));
    }

    /// The program. A conditional jump reaches 255 instructions at most: one whose target is
    /// farther goes to an unconditional jump (32-bit offset) placed right after it. Adding those
    /// only lengthens other jumps, so the layout is redone until no jump needs one more.
    pub(super) fn assemble(&self) -> Result<Vec<libc::sock_filter>, AssemblyError> {
        // Per instruction: whether its `yes` and its `no` go through a jump of their own.
        let mut far = vec![(false, false); self.code.len()];
        let Layout { at, places, len } = loop {
            let layout = self.layout(&far)?;
            let Layout { at, places, .. } = &layout;
            let mut grew = false;
            for (i, instruction) in self.code.iter().enumerate() {
                if let Instruction::Jump { yes, no, .. } = *instruction {
                    let too_far = |to: Label| places[to.0] - at[i] - 1 > usize::from(u8::MAX);
                    let (far_yes, far_no) = &mut far[i];
                    if !*far_yes && too_far(yes) {
                        *far_yes = true;
                        grew = true;
                    }
                    if !*far_no && too_far(no) {
                        *far_no = true;
                        grew = true;
                    }
                }
            }
            if !grew {
                break layout;
            }
        };
        if len > MAX_INSTRUCTIONS {
            return Err(AssemblyError::TooLong(len));
        }
        let offset = |from: usize, to: Label| places[to.0] - from - 1;
        let mut program = Vec::with_capacity(len);
        for (i, instruction) in self.code.iter().enumerate() {
            let here = at[i];
            match *instruction {
                Instruction::Load(offset) => program.push(statement(
                    libc::BPF_LD | libc::BPF_W | libc::BPF_ABS,
                    offset,
                )),
                Instruction::And(mask) => {
                    program.push(statement(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, mask))
                }
                Instruction::Return(value) => {
                    program.push(statement(libc::BPF_RET | libc::BPF_K, value))
                }
                Instruction::Goto(to) => program.push(statement(
                    libc::BPF_JMP | libc::BPF_JA,
                    offset(here, to) as u32,
                )),
                Instruction::Jump { cmp, k, yes, no } => {
                    // A far target's unconditional jump follows right after, `yes`'s first.
                    let far_targets: Vec<Label> = [(yes, far[i].0), (no, far[i].1)]
                        .into_iter()
                        .filter_map(|(to, far)| far.then_some(to))
                        .collect();
                    let short = |to: Label, far: bool, nth: usize| match far {
                        true => nth,
                        false => offset(here, to),
                    };
                    let jt = short(yes, far[i].0, 0);
                    let jf = short(no, far[i].1, usize::from(far[i].0));
                    program.push(libc::sock_filter {
                        code: (libc::BPF_JMP | cmp.code() | libc::BPF_K) as u16,
                        jt: jt as u8,
                        jf: jf as u8,
                        k,
                    });
                    for (n, to) in far_targets.into_iter().enumerate() {
                        let from = here + 1 + n;
                        program.push(statement(
                            libc::BPF_JMP | libc::BPF_JA,
                            offset(from, to) as u32,
                        ));
                    }
                }
                Instruction::Mark(_) => {}
            }
        }
        Ok(program)
    }

    /// Each instruction's place, and each label's, with the jumps `far` asks for; an error if a
    /// jump leads backwards or out of the program.
    fn layout(&self, far: &[(bool, bool)]) -> Result<Layout, AssemblyError> {
        let mut at = Vec::with_capacity(self.code.len());
        let mut places = vec![usize::MAX; self.labels];
        let mut next = 0;
        for (instruction, &far) in self.code.iter().zip(far) {
            at.push(next);
            if let Instruction::Mark(label) = instruction {
                places[label.0] = next;
            }
            next += size(instruction, far);
        }
        for (i, instruction) in self.code.iter().enumerate() {
            let targets = match *instruction {
                Instruction::Jump { yes, no, .. } => [Some(yes), Some(no)],
                Instruction::Goto(to) => [Some(to), None],
                _ => [None, None],
            };
            for to in targets.into_iter().flatten() {
                if places[to.0] >= next || places[to.0] <= at[i] {
                    return Err(AssemblyError::Jump(i));
                }
            }
        }
        Ok(Layout {
            at,
            places,
            len: next,
        })
    }
}

/// Where `Assembler::layout` put everything.
struct Layout {
    /// Each instruction's place (a mark's: the next instruction's).
    at: Vec<usize>,
    /// Each label's.
    places: Vec<usize>,
    /// The program's length.
    len: usize,
}

/// How many instructions `instruction` takes, with the jumps `far` asks for.
fn size(instruction: &Instruction, far: (bool, bool)) -> usize {
    match instruction {
        Instruction::Mark(_) => 0,
        Instruction::Jump { .. } => 1 + usize::from(far.0) + usize::from(far.1),
        _ => 1,
    }
}

impl Cmp {
    fn code(self) -> u32 {
        match self {
            Cmp::Eq => libc::BPF_JEQ,
            Cmp::Gt => libc::BPF_JGT,
            Cmp::Ge => libc::BPF_JGE,
        }
    }
}

/// An instruction that jumps nowhere conditionally.
fn statement(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}
