// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]
//! One integration binary: every test drives the real isolate binary against real repositories and
//! real processes, under the real kernel sandbox. Landlock is required: on a machine without it the
//! sandbox tests fail (isolate exits 125), they do not skip.

mod suite;
mod support;
