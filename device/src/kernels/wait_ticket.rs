//! `resident_wait_ticket`: one thread, enqueued on a user's stream, that waits until
//! every segment of a ticket's batch has completed in the persistent kernel, so that
//! work enqueued after it on that stream (kernels, copies, an event) follows the
//! tasks. What `cudaStreamWaitEvent` is to two streams, this is to a stream and the
//! resident queue.
//!
//! Ordering: for each segment, `ld.acquire.sys` of its `SegmentDone::stamp` in mapped
//! pinned memory, which pairs with the finisher's `fence.acq_rel.sys` + `st.relaxed.sys`
//! of that stamp (`crate::completion`, step 5): the tasks' writes happen before this
//! kernel ends, and kernel completion orders them before the stream's later work.
//!
//! A segment is done when its record holds its stamp (equality: a zeroed or older
//! record never matches). The record may already have been reused by a later segment
//! when this kernel gets to run (the stream was busy): then `tail` has moved more than a
//! ring past the segment's start, which the producer allows only once the segment has
//! completed (docs/protocol.md, step 3), so that also means done; `tail` is read with
//! `ld.acquire.sys` (its writer, the copy engine or the relay, published it after the
//! host had acquired this segment's stamp). The wait ends early, without either
//! guarantee, when the runtime aborts (`abort`) or stops (`stop`): the ticket itself
//! then carries the error.

use bytemuck::{Pod, Zeroable};
use resident_shared::segment::SegmentDone;
use resident_shared::{QueueHeader, stamp_for};

use crate::arch;

/// The kernel's one by-value argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct WaitTicketParams {
    /// The runtime's `SegmentDone` array (mapped pinned memory; device address).
    pub segment_done: u64,
    /// The runtime's queue header (device memory), for `abort` and `stop`.
    pub header: u64,
    /// The batch: sequence numbers `first..end` (wrapping 32-bit), cut into segments of
    /// `segment` tasks from `first` on, as the runtime placed them.
    pub first: u32,
    /// Tasks in the batch: `end` is `first + len`.
    pub len: u32,
    /// Tasks per segment (the runtime's segment size).
    pub segment: u32,
    /// Ring capacity minus one.
    pub mask: u32,
}
const _: () = assert!(core::mem::size_of::<WaitTicketParams>() == 32);

/// Longest sleep between two polls of a stamp (each a PCIe read).
const MAX_SLEEP_NS: u32 = 1_000;

/// Waits for the batch; returns whether it completed (false: the runtime aborted or
/// stopped first). Call from one thread.
///
/// # Safety
/// The addresses in `p` must be the live runtime's.
#[inline(always)]
pub unsafe fn run(p: &WaitTicketParams) -> bool {
    let done = p.segment_done as *const SegmentDone;
    let header = p.header as *const QueueHeader;
    let mut off = 0u32;
    let mut sleep = 32u32;
    while off < p.len {
        let first = p.first.wrapping_add(off);
        let rec = unsafe { done.add((first & p.mask) as usize) };
        // Acquire, .sys: pairs with the finisher's release pattern on `stamp`.
        let stamp = unsafe { arch::ld_acquire_sys(&raw const (*rec).stamp) };
        // Acquire, .sys: see the module doc.
        let tail = unsafe { arch::ld_acquire_sys(&raw const (*header).tail.value) };
        if stamp == stamp_for(first) || tail.wrapping_sub(first) as i32 > p.mask as i32 + 1 {
            off = off.saturating_add(p.segment);
            sleep = 32;
            continue;
        }
        // Relaxed: hints to give up; nothing is read through them.
        if unsafe { arch::ld_relaxed_sys(&raw const (*header).abort.value) } != 0
            || unsafe { arch::ld_relaxed_gpu(&raw const (*header).stop.value) } != 0
        {
            return false;
        }
        arch::nanosleep(sleep);
        sleep = (sleep * 2).min(MAX_SLEEP_NS);
    }
    true
}
