//! The functions a generated kernel crate calls from its entry points (`resident-build`
//! writes one `extern "ptx-kernel"` shell per entry, each calling one of these with the
//! user's task set or kernel type). Not for direct use.

pub use crate::kernels::wait_ticket::WaitTicketParams;
pub use resident_shared::{KernelParams, OneTaskParams, TableParams};

use crate::DeviceKernel;
use crate::task::TaskSet;

/// The persistent kernel's body: every warp runs the loop over the set `S`.
///
/// # Safety
/// `p` must describe a live queue (see `crate::queue`).
#[inline(always)]
pub unsafe fn persistent<S: TaskSet>(p: &KernelParams) {
    unsafe { crate::worker::persistent_loop::<S>(p) }
}

/// The relay kernel's body (two warps): the first moves small host batches into the
/// ring and runs lone express tasks of `S` itself (`crate::relay`); the second moves
/// what peer links push into this runtime's inboxes into the spawn ring
/// (`crate::inbox`).
///
/// # Safety
/// `p` must describe a live queue with a mapped relay mailbox (see `crate::relay`).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub unsafe fn relay<S: TaskSet>(p: &KernelParams) {
    // Exactly one inbox warp: the inboxes have one popper (`crate::inbox`, I3); a
    // launch with more warps than two leaves the others idle.
    match crate::arch::block_warp_id() {
        0 => unsafe { crate::relay::relay_loop::<S>(p) },
        1 => unsafe { crate::inbox::inbox_loop(p) },
        _ => {}
    }
}

/// The one-launch-per-task baseline's body: one task of `S` on one warp.
///
/// # Safety
/// `p` must name a valid buffer table and completion record.
#[inline(always)]
pub unsafe fn one_task<S: TaskSet>(p: &OneTaskParams) {
    unsafe { crate::worker::run_one::<S>(p) }
}

/// The one-launch-over-a-table baseline's body: task `w` of the table on global warp
/// `w`.
///
/// # Safety
/// `p` must name a valid buffer table and `p.len` readable tasks.
#[inline(always)]
pub unsafe fn table<S: TaskSet>(p: &TableParams) {
    unsafe { crate::worker::run_table::<S>(p) }
}

/// Waits until a ticket's batch has completed in the persistent kernel (the stream
/// API's ticket wait; launch with one thread).
///
/// # Safety
/// `p` must name the live runtime's memory (see `crate::kernels::wait_ticket`).
#[inline(always)]
pub unsafe fn wait_ticket(p: &WaitTicketParams) {
    unsafe { crate::kernels::wait_ticket::run(p) };
}

/// An ordinary kernel's body.
///
/// # Safety
/// As for [`DeviceKernel::run`].
#[inline(always)]
pub unsafe fn kernel<K: DeviceKernel>(p: &K::Params) {
    unsafe { K::run(p) }
}
