//! Links: follow-up tasks that a task running in one runtime pushes into another
//! runtime's queue (another device's, in the multi-GPU case), without the host having
//! to wait for the first task and submit the second.
//!
//! A link from runtime A to runtime B is, in A's memory:
//! - an entry in A's link table ([`LinkEntry`], [`MAX_LINKS`] of them), which lies in the
//!   allocation of A's buffer table, at [`TABLE_OFFSET`], followed by one `enqueue`
//!   counter per link on its own 128-byte line ([`ENQUEUE_OFFSET`]), in device memory;
//! - an outbox, in memory that A's device and the host can both read and write (mapped
//!   pinned memory on CUDA, host memory on the CPU backend): `capacity` `u32` sequence
//!   words, then `capacity` [`crate::Task`] slots ([`outbox_slots_offset`]).
//!
//! A's tasks push into the outbox (several warps at once: a bounded multi-producer
//! queue with per-slot sequence words after D. Vyukov, positions handed out by an
//! atomic add, with the one consumer on the host); the
//! host's forwarder pops and submits what it pops to B, where B's checks apply as to
//! any submission. The protocol and its orderings are in `resident_device::link`.
//! Sequence words are stored relative to their slot index (`stored = seq - index`), so
//! that zeroed memory is the initial state.

use bytemuck::{Pod, Zeroable};

use crate::{BufferEntry, MAX_BUFFERS};

/// Links one runtime may have made over its life (an index is never reused: a push
/// that read a dropped link's entry may still be writing its outbox, which therefore
/// lives as long as the runtime).
pub const MAX_LINKS: usize = 64;

/// Default slots of an outbox: pushes in flight before the forwarder pops them.
pub const DEFAULT_OUTBOX: u32 = 4096;

/// A link as tasks name it: its entry in the pushing runtime's link table and the
/// generation it was made with. Generations are handed out once per process, so an id
/// of a dropped link, or of another runtime's, never names a live link: a push through
/// it fails with `Status::BadLink`. An id is not a secret (generations are sequential):
/// any task of a runtime may push through any of its live links.
///
/// `Pod`, so it can sit in a task's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Pod, Zeroable)]
#[repr(C)]
pub struct LinkId {
    /// Its entry in the link table.
    pub index: u32,
    /// Its generation (0: none).
    pub generation: u32,
}

impl LinkId {
    /// No link: every push through it fails.
    pub const NONE: Self = Self { index: 0, generation: 0 };
}

/// One entry of the link table: where the outbox is (an address the pushing device
/// can write) and with which generation the link lives. An empty (zeroed) entry names
/// no link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct LinkEntry {
    /// The outbox: sequence words, then slots (device address on CUDA).
    pub outbox: u64,
    /// Its slots minus one (a power of two minus one).
    pub mask: u32,
    /// The live link's generation; 0: none.
    pub generation: u32,
}
const _: () = assert!(core::mem::size_of::<LinkEntry>() == core::mem::size_of::<BufferEntry>());

impl LinkEntry {
    /// No link.
    pub const EMPTY: Self = Self { outbox: 0, mask: 0, generation: 0 };
}

/// Byte offset of the link table in the buffer-table allocation.
pub const TABLE_OFFSET: usize = MAX_BUFFERS * core::mem::size_of::<BufferEntry>();

/// Byte offset of the links' `enqueue` counters (one per link, 128 bytes apart) in the
/// same allocation.
pub const ENQUEUE_OFFSET: usize = (TABLE_OFFSET + MAX_LINKS * core::mem::size_of::<LinkEntry>()).next_multiple_of(128);

/// Bytes between two links' `enqueue` counters.
pub const ENQUEUE_STRIDE: usize = 128;

/// Byte offset of the inbound table ([`InboundEntry`], [`MAX_INBOUND`] of them): the
/// inboxes of peer links into this runtime, which its inbox warp (the relay kernel's
/// second warp) drains.
pub const INBOUND_OFFSET: usize = ENQUEUE_OFFSET + MAX_LINKS * ENQUEUE_STRIDE;

/// Bytes of the buffer-table allocation: the buffer table, the link table, the
/// `enqueue` counters, the inbound table.
pub const TABLES_BYTES: usize = INBOUND_OFFSET + MAX_INBOUND * core::mem::size_of::<InboundEntry>();

/// The flag in [`LinkEntry::mask`] of a peer link: `outbox` is then an inbox in the
/// other device's memory (reached through peer access), drained by that runtime's relay
/// warp, with no host thread in between (`resident_device::inbox`).
pub const PEER: u32 = 1 << 31;

/// Peer links into one runtime over its life (an inbound entry is never reused: a push
/// that read a closed link's entry may still be writing its inbox).
pub const MAX_INBOUND: usize = 16;

/// One entry of the inbound table. Zeroed: no inbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct InboundEntry {
    /// The inbox (device address, this device's memory): an [`InboxHeader`], sequence
    /// words, slots.
    pub inbox: u64,
    /// Its slots minus one.
    pub mask: u32,
    /// Non-zero while the inbox warp drains it.
    pub live: u32,
}
const _: () = assert!(core::mem::size_of::<InboundEntry>() == 16);

/// The head of an inbox, in the receiving device's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(128))]
pub struct InboxHeader {
    /// Tasks of this inbox completed (failed ones included): a release add of 1 by the
    /// worker that ran each.
    pub done: u64,
    /// Of those, failed: added (relaxed) before the task's `done` add. Right after
    /// `done`: a task's `seg`/`wait_value` name `done`, and this is the next word.
    pub failed: u64,
    /// The next position the inbox warp pops (its own; kept here across relaunches).
    pub dequeue: u32,
    /// Non-zero once the receiving runtime closes: pushes fail (`Status::BadLink`)
    /// instead of waiting for room that nobody makes.
    pub closed: u32,
    /// Where the relay copies `done` and `failed` for the host: two `u64`s in mapped
    /// pinned memory (its device address; written by the host before the inbox goes
    /// live).
    pub mirror: u64,
    /// The value of `done` the relay copied last (the relay's own).
    pub published: u64,
    /// To 128 bytes: the sequence words start on their own line.
    pub _pad: [u32; 22],
}
const _: () = assert!(core::mem::size_of::<InboxHeader>() == 128);

/// Byte offset of the sequence words in an inbox.
pub const INBOX_SEQ_OFFSET: usize = core::mem::size_of::<InboxHeader>();

/// Byte offset of the task slots in an inbox of `capacity` slots.
#[inline]
pub const fn inbox_slots_offset(capacity: u32) -> usize {
    (INBOX_SEQ_OFFSET + capacity as usize * 4).next_multiple_of(128)
}

/// Bytes of an inbox of `capacity` slots.
#[inline]
pub const fn inbox_bytes(capacity: u32) -> usize {
    inbox_slots_offset(capacity) + capacity as usize * core::mem::size_of::<crate::Task>()
}

/// Byte offset of the task slots in an outbox of `capacity` slots.
#[inline]
pub const fn outbox_slots_offset(capacity: u32) -> usize {
    (capacity as usize * 4).next_multiple_of(128)
}

/// Bytes of an outbox of `capacity` slots.
#[inline]
pub const fn outbox_bytes(capacity: u32) -> usize {
    outbox_slots_offset(capacity) + capacity as usize * core::mem::size_of::<crate::Task>()
}
