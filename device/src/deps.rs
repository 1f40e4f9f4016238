//! Device-side dependencies: a task may wait until a device counter reaches a value
//! before it runs, and may add one to a counter after it ran. Counters only grow
//! (wrapping at 2^32; values are compared as distances of at most 2^31).
//!
//! Ordering: the signaling task's writes, then `bar.warp.sync`, then lane 0's
//! `atom.acq_rel.gpu` add on the counter (release; in `crate::completion`), pairs with
//! the waiting task's `ld.acquire.gpu` of the counter (a load made once a relaxed poll
//! saw the value reached): once the waiter sees the value, it sees the writes of every
//! task whose signal the value counts.
//!
//! No deadlock from waiting: every worker is co-resident, claims are handed out in
//! sequence order, so a task that waits only on tasks submitted before it always has
//! them claimed by running workers. Children pushed by a task submitted before it count
//! too: the warp that pushed them looks for children before it claims again (also with
//! `worker_flags::SPARSE_LOOK`, device/src/worker.rs), so they never all wait behind
//! queue tasks. Tasks pushed from another runtime through a link (the inbox warp's)
//! have no place in this order: a wait on a counter that only they signal ends only
//! once some worker looks at the spawn ring (an idle one, or one after every few
//! tasks), and never if every worker holds such a wait.
//!
//! A wait on a counter nothing will signal ends with [`Status::CounterDropped`] when the
//! host drops the counter, [`Status::Cancelled`] when the host cancels its ticket,
//! [`Status::Aborted`] when the host aborts.

use resident_shared::{DROPPED, Status, Task};

use crate::arch;
use crate::task::TaskCx;

/// Longest sleep between two polls of a counter: short, since dependency chains are on
/// the critical path.
const MAX_WAIT_SLEEP_NS: u32 = 256;

/// Waits for `task`'s dependency. Every lane must call; the result is warp-uniform.
///
/// # Safety
/// `cx.counters` must point to the live counter table.
#[inline(always)]
pub unsafe fn wait(cx: &TaskCx, task: &Task) -> Result<(), Status> {
    if task.wait_counter == 0 {
        return Ok(());
    }
    // Every 16-bit id has an entry (`MAX_COUNTERS`): no id is out of the table.
    if cx.counters.is_null() {
        return Err(Status::BadArgs);
    }
    let c = unsafe { cx.counters.add(task.wait_counter as usize) };
    // The counter's dropped flag (`resident_shared::DROPPED`): the table has one per id.
    let dropped = unsafe { cx.counters.add(DROPPED + task.wait_counter as usize) };
    let mut sleep = 0u32;
    let reached = |v: u32| arch::all_lanes(v.wrapping_sub(task.wait_value) as i32 >= 0);
    loop {
        // Relaxed, .gpu, while it waits; then acquire, .gpu, once the value is reached:
        // that second load (the same value or a later one: counters only grow) pairs
        // with the signalers' release adds. A waiting warp polls relaxed because an
        // acquire load invalidates the SM's L1, which the warps beside it use.
        if reached(unsafe { arch::ld_relaxed_gpu(c) }) && reached(unsafe { arch::ld_acquire_gpu(c) }) {
            return Ok(());
        }
        if cx.aborting() {
            return Err(Status::Aborted);
        }
        // Relaxed, .sys: flags the host sets while the task waits (a copy into device
        // memory, a relaxed store on the CPU backend); they order nothing. Uniform
        // across the warp (lane 0's view decides), as the result must be.
        if arch::shfl_idx(unsafe { arch::ld_relaxed_sys(dropped) }, 0) != 0 {
            return Err(Status::CounterDropped);
        }
        if arch::shfl_idx(cx.cancelled() as u32, 0) != 0 {
            return Err(Status::Cancelled);
        }
        arch::nanosleep(sleep);
        sleep = (sleep * 2).clamp(32, MAX_WAIT_SLEEP_NS);
    }
}

/// Signals `task`'s counter, if it has one. Lane 0 only, after `bar.warp.sync`.
///
/// # Safety
/// `counters` must point to the live counter table (or be null).
#[inline(always)]
pub unsafe fn signal(counters: *mut u32, task: &Task) {
    let s = task.signal_counter as usize;
    if s != 0 && !counters.is_null() {
        // Release, .gpu: see the module doc.
        unsafe { arch::atom_add_acq_rel_gpu(counters.add(s), 1) };
    }
}
