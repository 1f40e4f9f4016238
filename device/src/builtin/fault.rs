//! Fault injection: tasks that kill the kernel on purpose, so that tests can prove the
//! runtime's fault handling (every ticket resolves, a new runtime starts). They declare
//! themselves `UNCHECKED`: only the host's `unsafe` `Batch::submit_unchecked` passes them on.
//! Tiny on purpose: they sit in the persistent loop's one dispatch, whose register
//! budget is 80.

use resident_shared::{ArgError, Declare, Status, TaskId};

use super::{FaultIllegalAddress, FaultTrap, ids};
use crate::{DeviceTask, TaskCx, arch};

impl DeviceTask for FaultTrap {
    const ID: TaskId = ids::FAULT_TRAP;
    const UNCHECKED: bool = true;
    #[inline]
    fn declare(&self, _: &mut Declare<'_>) -> Result<(), ArgError> {
        Ok(())
    }
    /// `trap`: the kernel ends with an illegal-instruction error (the CPU backend's
    /// `arch::trap` panics the worker thread).
    #[inline(always)]
    fn run(&self, _: &TaskCx) -> Result<u64, Status> {
        arch::trap()
    }
}

impl DeviceTask for FaultIllegalAddress {
    const ID: TaskId = ids::FAULT_ILLEGAL_ADDRESS;
    const UNCHECKED: bool = true;
    #[inline]
    fn declare(&self, _: &mut Declare<'_>) -> Result<(), ArgError> {
        Ok(())
    }
    /// A store through the task's forged address. If the address happens to be valid
    /// the store lands there and the task succeeds: that is what "unchecked" means.
    #[inline(always)]
    fn run(&self, _: &TaskCx) -> Result<u64, Status> {
        if arch::lane_id() == 0 {
            // SAFETY: none: this task exists to store through a forged address, and the
            // host accepts it only from `Batch::submit_unchecked`, whose caller vouches for it
            // (the CPU twin panics instead of storing).
            unsafe { arch::store_forged(self.addr as *mut u32, 0xdead_beef) };
        }
        Ok(0)
    }
}
