//! The spawn ring: where running tasks push follow-up tasks ("children") for other
//! workers, inside the one kernel, without the host.
//!
//! A bounded multi-producer multi-consumer ring with a sequence word per slot (after
//! D. Vyukov's design) whose positions are handed out in ranges by atomic adds, in
//! device memory (host memory on the CPU backend): a [`SpawnHeader`], then `capacity`
//! `u32` sequence words, then `capacity` [`crate::Task`] slots, then one batch area per
//! worker ([`POP_BATCH`] tasks and a [`PendingCount`]). The protocol is in `device/src/spawn.rs`; this
//! module owns the layout only.
//!
//! Sequence words are stored relative to their slot index (`stored = seq - index`), so
//! that zeroed memory is the initial state: no initialisation pass before launch.

use bytemuck::{Pod, Zeroable};

use crate::{CachePadded, Task};

/// Default number of spawn slots: children in flight at once (16 MiB of slots, as
/// many as the default ring). A tree of up to this many nodes never finds the ring
/// full, however its pushes and pops interleave (each node holds at most one slot, and
/// only until a worker pops it); past it, a pusher waits for room ([`PUSH_WAIT_NS`]).
pub const DEFAULT_SPAWN_CAPACITY: u32 = 1 << 18;

/// How long a push waits for room in a full spawn ring (others pop meanwhile) before
/// it fails with `Status::QueueFull`: the overflow policy is backpressure, bounded. A
/// wait that runs out means the children in flight at once outgrew the ring
/// (`RuntimeConfig::spawn_capacity`) while every warp was pushing.
pub const PUSH_WAIT_NS: u64 = 20_000_000;

/// The header: two positions and two counts, each on its own 128-byte line.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
pub struct SpawnHeader {
    /// Next position to push at: a pusher owns a range of positions by one atomic add,
    /// after it reserved room in `used`.
    pub enqueue: CachePadded,
    /// Next position to pop from: a popper owns a range by one atomic add, after it
    /// took as many of `ready`.
    pub dequeue: CachePadded,
    /// Children published and not yet taken (as `i32`: concurrent takes make it
    /// negative for a moment, and each gives back what it could not take): pushers add
    /// after they publish, poppers take before they claim positions.
    pub ready: CachePadded,
    /// Slots reserved by pushers and not yet handed back by poppers: at most the
    /// capacity, which bounds every wait for a slot (`device/src/spawn.rs`).
    pub used: CachePadded,
}

const _: () = assert!(core::mem::size_of::<SpawnHeader>() == 512);

/// Most children one worker pops at once: it copies them into its own batch area (so
/// that their slots go back to the pushers at once) and runs them one after another.
pub const POP_BATCH: u32 = 8;

/// Byte offset of the sequence words in the spawn allocation.
pub const SEQ_OFFSET: usize = core::mem::size_of::<SpawnHeader>();

/// Byte offset of the task slots in a spawn allocation of `capacity` slots (aligned to
/// 128 bytes so that a slot never straddles two lines).
#[inline]
pub const fn slots_offset(capacity: u32) -> usize {
    (SEQ_OFFSET + capacity as usize * 4).next_multiple_of(128)
}

/// Byte offset of the workers' batch areas ([`POP_BATCH`] tasks per worker) in a
/// spawn allocation of `capacity` slots.
#[inline]
pub const fn batches_offset(capacity: u32) -> usize {
    slots_offset(capacity) + capacity as usize * core::mem::size_of::<Task>()
}

/// Bytes of one worker's batch area: [`POP_BATCH`] tasks, then its [`PendingCount`]
/// (padded to a task's size).
pub const BATCH_BYTES: usize = (POP_BATCH as usize + 1) * core::mem::size_of::<Task>();

/// Bytes of a spawn allocation of `capacity` slots for `workers` workers (warps).
#[inline]
pub const fn bytes(capacity: u32, workers: u32) -> usize {
    batches_offset(capacity) + workers as usize * BATCH_BYTES
}

/// The completions of a worker's batch of children not yet added to their segment's
/// count: the sum of their completion adds (`crate::segment::completion_add`; 0: none),
/// all of one segment. The worker adds it once, when the batch ends or its next child
/// belongs to another segment (`device/src/completion.rs`).
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
pub struct PendingCount {
    /// The sum of the completion adds.
    pub add: u64,
}
