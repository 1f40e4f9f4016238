//! `noop`: the smallest task, for measuring dispatch cost. Echoes its tag.

use resident_shared::Task;

use super::Outcome;

#[inline(always)]
pub fn run(task: &Task) -> Outcome {
    Outcome::ok(task.arg_u64(0))
}
