//! The binary search on the system call number that starts a seccomp program: the numbers cut
//! into runs that lead to one place each (a call's rules, or the default action), told apart by
//! one `jge` per node: a call passes about six tests where a list of `jeq` would make it pass one
//! per call with rules (some eighty). It reads nothing but the accumulator, which holds the
//! number, and changes nothing.

use super::assembler::{Assembler, Cmp, Label};

/// The system call numbers, from 0 to `u32::MAX`, cut into runs that lead to one place each
/// (a call's rules, or the default).
pub(super) struct Search {
    /// The first number of each run and where it leads, ascending.
    starts: Vec<(u32, Label)>,
    default: Label,
}

impl Search {
    pub(super) fn new(default: Label) -> Search {
        Search {
            starts: vec![(0, default)],
            default,
        }
    }

    /// Number `nr` (each above the last added) leads to `to`.
    pub(super) fn add(&mut self, nr: u32, to: Label) {
        self.begin(nr, to);
        // Below x32's bit: never the last number.
        self.begin(nr + 1, self.default);
    }

    /// A run from `nr` on leads to `to`: the last run goes on if it leads there too, and gives
    /// way if it began at `nr` (then the one before it may go on).
    fn begin(&mut self, nr: u32, to: Label) {
        if let Some(&(first, leads)) = self.starts.last() {
            if leads == to {
                return;
            }
            if first == nr {
                self.starts.pop();
                if self.starts.last().is_some_and(|&(_, before)| before == to) {
                    return;
                }
            }
        }
        self.starts.push((nr, to));
    }

    /// Where the search begins: its first test, or the one place every number leads to.
    pub(super) fn root(&self, asm: &mut Assembler) -> Label {
        node(asm, &self.starts)
    }

    /// The tests, placed at `root`: at each, the number against the first of the upper half of
    /// the runs.
    pub(super) fn place(&self, asm: &mut Assembler, root: Label) {
        if self.starts.len() > 1 {
            tree(asm, &self.starts, root);
        }
    }
}

/// Where the search of `runs` begins: a new test, or the place a single run leads to.
fn node(asm: &mut Assembler, runs: &[(u32, Label)]) -> Label {
    match runs {
        [(_, to)] => *to,
        _ => asm.label(),
    }
}

/// The tests that tell `runs` (two or more) apart, the first placed at `here`.
fn tree(asm: &mut Assembler, runs: &[(u32, Label)], here: Label) {
    let (lower, upper) = runs.split_at(runs.len() / 2);
    let (below, above) = (node(asm, lower), node(asm, upper));
    asm.mark(here);
    asm.jump(Cmp::Ge, upper[0].0, above, below);
    if lower.len() > 1 {
        tree(asm, lower, below);
    }
    if upper.len() > 1 {
        tree(asm, upper, above);
    }
}
