//! The terminate sentinel: tells every worker holding a later slot to leave. The
//! runtime's own task ([`resident_shared::TaskId::TERMINATE`]), handled by the loop
//! before any set's dispatch: no set can hold or shadow it.

use resident_shared::{QueueHeader, Status};

use crate::arch;
use crate::task::Outcome;

/// # Safety
/// `header` must be the live queue header (or null outside the queue).
#[inline(always)]
pub unsafe fn run(header: *mut QueueHeader, seq: u32) -> Outcome {
    let h = header;
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
