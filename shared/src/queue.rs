//! The work queue's header in device memory: monotonically increasing 32-bit counters,
//! each on its own 128-byte line so that the claim traffic on `head` does not evict the
//! line the host writes `tail` into. Indices into the ring are `seq % capacity`; the
//! counters themselves never wrap back to an index (they wrap at 2^32, and every
//! comparison is done with [`seq_before`]).

use bytemuck::{Pod, Zeroable};

/// A `u32` alone on a 128-byte line (an L2 line on Hopper is 128 bytes).
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C, align(128))]
pub struct CachePadded {
    /// The counter.
    pub value: u32,
    /// Fills the line to 128 bytes; unused.
    pub _pad: [u32; 31],
}
const _: () = assert!(core::mem::size_of::<CachePadded>() == 128);

impl CachePadded {
    /// A zero counter.
    pub const ZERO: Self = Self { value: 0, _pad: [0; 31] };
}

/// Counters shared by the host and every worker.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
pub struct QueueHeader {
    /// Claim counter: a worker owns slots `[h, h + claim)` after an atomic add on it.
    pub head: CachePadded,
    /// Publication counter: slots before `tail` hold complete tasks. Written by the
    /// host's transfer stream after the slot copy (stream order + memory barrier).
    pub tail: CachePadded,
    /// Set to 1 by the worker that runs the terminate sentinel (release, .gpu).
    pub stop: CachePadded,
    /// Sequence number of the terminate sentinel, stored before `stop`.
    pub stop_at: CachePadded,
    /// Set to nonzero by the host to make every worker leave as soon as it can.
    pub abort: CachePadded,
    /// Workers that have left the persistent loop (each adds one, release .gpu, as it
    /// leaves). The relay stays until all `KernelParams::workers` have, so that an
    /// abort through its mailbox reaches a task still running after the sentinel.
    pub exited: CachePadded,
}
const _: () = assert!(core::mem::size_of::<QueueHeader>() == 6 * 128);
const _: () = assert!(core::mem::offset_of!(QueueHeader, tail) == 128);

impl QueueHeader {
    /// Every counter zero: the header of an empty queue.
    pub const ZERO: Self = Self {
        head: CachePadded::ZERO,
        tail: CachePadded::ZERO,
        stop: CachePadded::ZERO,
        stop_at: CachePadded::ZERO,
        abort: CachePadded::ZERO,
        exited: CachePadded::ZERO,
    };
}

/// `a` comes strictly before `b` in sequence order, for counters that wrap at 2^32
/// and are never more than 2^31 apart.
#[inline]
pub const fn seq_before(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) > 0
}

#[cfg(test)]
mod tests {
    use super::seq_before;

    #[test]
    fn seq_before_wraps() {
        assert!(seq_before(0, 1));
        assert!(!seq_before(1, 1));
        assert!(!seq_before(2, 1));
        assert!(seq_before(u32::MAX, 0));
        assert!(seq_before(u32::MAX - 5, 3));
    }
}
