//! The persistent loop: what every worker warp runs from launch to shutdown.
//! Claim a range of slots, wait for each to be published, wait for its dependency, run
//! it, complete it; leave on the terminate sentinel or on abort. The queue protocol is
//! in [`crate::queue`], completion counting in [`crate::completion`], dependencies in
//! [`crate::deps`], the tasks in [`crate::tasks`].

use resident_shared::{BufferEntry, Completion, KernelParams, OneTaskParams, stamp_for, worker_flags};

use crate::completion::Completer;
use crate::queue::{DeviceQueue, Wait};
use crate::tasks::{self, Outcome, TaskContext};

/// Runs the persistent loop on the calling warp (GPU) or thread (CPU backend).
///
/// # Safety
/// `p` must describe a live queue (see [`DeviceQueue::new`]), buffer table, counter
/// table and completion arrays.
#[inline(always)]
pub unsafe fn persistent_loop(p: &KernelParams) {
    let q = unsafe { DeviceQueue::new(p) };
    let done = unsafe { Completer::new(p) };
    let cx = TaskContext { buffers: p.buffers as *const BufferEntry, header: q.header(), counters: p.counters as *mut u32 };
    let mut tail_seen = 0u32;
    let preclaim = p.flags & worker_flags::PRECLAIM != 0;
    let mut next = unsafe { q.start_claim() };
    loop {
        let first = q.claimed(next);
        for k in 0..q.claim {
            let seq = first.wrapping_add(k);
            if unsafe { q.wait_published(seq, &mut tail_seen) } == Wait::Stop {
                // Any claimed slot after this one lies after the sentinel too: none
                // will ever be published.
                return;
            }
            if preclaim && k + 1 == q.claim {
                next = unsafe { q.start_claim() };
            }
            let task = unsafe { q.read_task(seq) };
            let out = match unsafe { crate::deps::wait(&cx, &task) } {
                Ok(()) => unsafe { tasks::execute(&task, &cx, seq) },
                Err(status) => Outcome::err(status),
            };
            unsafe { done.complete(seq, &task, out) };
        }
        if !preclaim {
            next = unsafe { q.start_claim() };
        }
    }
}

/// Runs one task outside the queue: the body of the one-launch-per-task baseline.
/// The completion is written with plain stores; kernel completion orders it.
///
/// # Safety
/// `p.buffers` must point to a buffer table, `p.completion` to a writable record.
pub unsafe fn run_one(p: &OneTaskParams) {
    let cx = TaskContext { buffers: p.buffers as *const BufferEntry, header: core::ptr::null_mut(), counters: core::ptr::null_mut() };
    let out = unsafe { tasks::execute(&p.task, &cx, p.seq) };
    if crate::arch::lane_id() == 0 {
        let rec = p.completion as *mut Completion;
        unsafe { rec.write(Completion { stamp: stamp_for(p.seq), status: out.status as u32, result: out.result }) };
    }
}
