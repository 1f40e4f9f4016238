//! The spawn ring: where running tasks push follow-up tasks ("children") for other
//! workers, inside the one kernel, without the host.
//!
//! A bounded multi-producer multi-consumer queue after D. Vyukov's design, in device
//! memory (host memory on the CPU backend): a [`SpawnHeader`] with the enqueue and
//! dequeue positions on their own lines, then `capacity` `u32` sequence words, then
//! `capacity` [`crate::Task`] slots. The protocol is in `device/src/spawn.rs`; this
//! module owns the layout only.
//!
//! Sequence words are stored relative to their slot index (`stored = seq - index`), so
//! that zeroed memory is the initial state: no initialisation pass before launch.

use bytemuck::{Pod, Zeroable};

use crate::{CachePadded, Task};

/// Default number of spawn slots: children in flight at once (16 MiB of slots, as
/// many as the default ring). A tree of up to this many nodes never finds the ring
/// full, however its pushes and pops interleave (each node holds at most one slot, and
/// only until it runs); past it, a pusher waits for room ([`PUSH_WAIT_NS`]).
pub const DEFAULT_SPAWN_CAPACITY: u32 = 1 << 18;

/// How long a push waits for room in a full spawn ring (others pop meanwhile) before
/// it fails with `Status::QueueFull`: the overflow policy is backpressure, bounded. A
/// wait that runs out means the children in flight at once outgrew the ring
/// (`RuntimeConfig::spawn_capacity`) while every warp was pushing.
pub const PUSH_WAIT_NS: u64 = 20_000_000;

/// The two positions and the count of published children, each on its own 128-byte
/// line.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
pub struct SpawnHeader {
    /// Next position to push at (CAS by pushers).
    pub enqueue: CachePadded,
    /// Next position to pop from (an atomic add by the worker that took one of
    /// `ready`).
    pub dequeue: CachePadded,
    /// Children published and not yet taken (as `i32`: a failed take makes it
    /// negative for a moment): pushers add after they publish, poppers take one with
    /// an atomic add of -1 before they claim a position (session 22; it was a
    /// compare-and-swap on `dequeue` that every idle warp tried).
    pub ready: CachePadded,
}
const _: () = assert!(core::mem::size_of::<SpawnHeader>() == 384);

/// Byte offset of the sequence words in the spawn allocation.
pub const SEQ_OFFSET: usize = core::mem::size_of::<SpawnHeader>();

/// Byte offset of the task slots in a spawn allocation of `capacity` slots (aligned to
/// 128 bytes so that a slot never straddles two lines).
#[inline]
pub const fn slots_offset(capacity: u32) -> usize {
    (SEQ_OFFSET + capacity as usize * 4).next_multiple_of(128)
}

/// Bytes of a spawn allocation of `capacity` slots.
#[inline]
pub const fn bytes(capacity: u32) -> usize {
    slots_offset(capacity) + capacity as usize * core::mem::size_of::<Task>()
}
