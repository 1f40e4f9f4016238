//! The terminate sentinel: tells every worker holding a later slot to leave.

use resident_shared::Status;

use super::{Outcome, TaskContext};
use crate::arch;

/// # Safety
/// `cx.header` must be the live queue header (or null outside the queue).
#[inline(always)]
pub unsafe fn run(cx: &TaskContext, seq: u32) -> Outcome {
    let h = cx.header;
    if h.is_null() {
        return Outcome::err(Status::InvalidOpcode);
    }
    unsafe {
        arch::st_relaxed_gpu(&raw mut (*h).stop_at.value, seq);
        // Release, .gpu: publishes `stop_at` to the acquire of `stop` in waiting warps.
        arch::st_release_gpu(&raw mut (*h).stop.value, 1);
    }
    Outcome::ok(seq as u64)
}
