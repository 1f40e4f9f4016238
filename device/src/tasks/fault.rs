//! Fault injection: tasks that kill the kernel on purpose, so that tests can prove the
//! runtime's fault handling (every ticket resolves, a new runtime starts). Reachable
//! only through the host's `unsafe` `submit_unchecked` (`Opcode::unchecked_only`).
//! Tiny on purpose: they sit in the persistent loop's one dispatch, whose register
//! budget is 80.

use resident_shared::Task;

use super::Outcome;
use crate::arch;

/// `trap`: the kernel ends with an illegal-instruction error (the CPU backend's
/// `arch::trap` panics the worker thread).
#[inline(always)]
pub fn trap() -> Outcome {
    arch::trap()
}

/// A store through the task's forged address. If the address happens to be valid the
/// store lands there and the task succeeds: that is what "unchecked" means.
///
/// # Safety
/// Writes `args[0..2]` as an address, unchecked (the CPU twin panics instead).
#[inline(always)]
pub unsafe fn illegal_address(task: &Task) -> Outcome {
    if arch::lane_id() == 0 {
        unsafe { arch::store_forged(task.arg_u64(0) as *mut u32, 0xdead_beef) };
    }
    Outcome::ok(0)
}
