//! The relay's mailbox, in mapped pinned host memory: how small host batches reach the
//! running kernel without a driver call. The protocol is in `device/src/relay.rs`
//! (device side) and `host/backend/cuda/relay.rs` (host side).
//!
//! Small batches travel inline, in [`LL_SLOTS`] slots of 16 eight-byte words. Each word
//! carries four bytes of the task and a four-byte stamp naming the task's sequence
//! number: NCCL's "LL" (low-latency) protocol. A naturally aligned 8-byte access is
//! single-copy atomic on both sides (x86-64 stores; PTX `ld.relaxed.sys.u64`), so a
//! word whose stamp is right carries the right payload, whatever order the words land
//! in. The relay therefore needs no flag and no second read: one parallel read of a
//! slot's 16 words is both the poll and the fetch (one PCIe round trip, where a flag
//! followed by a read of the task costs two; measured on an H200 in
//! `benches/floor/latency_floor.cu`: 2.4 µs against 3.6 µs).

use bytemuck::{Pod, Zeroable};

use crate::Task;
use crate::lists::{LIST_RUNS, ListRun};

/// Inline slots: a ring indexed by sequence number. Twice the largest relayed batch, so
/// that the host can write one batch while the relay still reads the previous one.
pub const LL_SLOTS: usize = 64;
/// Words per slot: four payload bytes each.
pub const LL_WORDS: usize = size_of::<Task>() / 4;

/// One inline task: word `i` is `task_word[i] | stamp << 32`.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C, align(128))]
pub struct LlSlot {
    /// The task's words with their stamps ([`ll_word`]): written by the host, read by
    /// the relay.
    pub words: [u64; LL_WORDS],
}
const _: () = assert!(size_of::<LlSlot>() == 128);

/// The stamp of sequence number `seq`: its low 32 bits. Stamps repeat every 2^32 tasks,
/// so the host rewrites every slot with a stamp far from the live sequence numbers
/// before the stale contents of any slot could alias (`host/backend/cuda/relay.rs`, `poison`).
#[inline(always)]
pub const fn ll_stamp(seq: u64) -> u32 {
    seq as u32
}

/// The word the host writes for payload word `w` of task `seq`.
#[inline(always)]
pub const fn ll_word(seq: u64, w: u32) -> u64 {
    w as u64 | (ll_stamp(seq) as u64) << 32
}

/// A gap in the relay's clock over 16 of its polls longer than this is a time slice
/// taken by another context ([`RelayMailbox::slices`]). A poll with its sleep takes a
/// few microseconds; the slices another process took measured 2.5 ms (H100, driver
/// 580, 2026-11-26).
pub const SLICE_GAP_NS: u64 = 500_000;

/// Set in the `span` of a mailbox entry whose run lies in the host ring: its address
/// follows from its first sequence number (`host_ring + (first % capacity) * 64`; for
/// a [`COMPACT_RUN`], past the first half of its slots).
pub const RING_RUN: u64 = 1 << 63;

/// Set in the `span` of a mailbox entry, beside [`RING_RUN`], when the run's tasks are
/// compact ([`crate::CompactTask`]): a run of `len` tasks from slot `s` holds them in
/// the second half of its own slots, task `j` at `host_ring + 64 s + 32 (len + j)`, so
/// that a slot holds only tasks at or before its own (the next lap writes slot `s + m`
/// once the tasks up to `s + m` completed). The relay then sets
/// [`crate::lists::COMPACT`] in the address it computes, `host_ring + 64 s + 32 len`.
pub const COMPACT_RUN: u64 = 1 << 62;

/// The bits of a mailbox entry's `span` that are not the run's `first` and `len`.
pub const RUN_FLAGS: u64 = RING_RUN | COMPACT_RUN;

/// The mailbox: what the relay writes back on its own line, then the inline slots.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C, align(128))]
pub struct RelayMailbox {
    /// End of what the relay has consumed and published into the device ring (64-bit:
    /// never wraps). Written with release at system scope when the relay finds no
    /// new slot; the host waits on it before reusing a slot and before it publishes
    /// by copy, so the two publishers of `tail` never overlap.
    pub relayed: u64,
    /// Written non-zero by the host to abort the workers (`CudaBackend::abort`); the
    /// relay, which polls this memory anyway, passes it on to `QueueHeader::abort` in
    /// device memory. Unlike the memset that also does so, it needs no other work to
    /// run beside the resident kernels (under compute-sanitizer the memset did not land
    /// while they ran).
    pub abort: u64,
    /// Where a relaunched relay resumes (elastic residency): its next sequence
    /// number and the runs published so far. Written by the host before every launch
    /// (zero before the first), while no relay runs; the launch orders them before the
    /// relay's reads.
    pub resume_next: u64,
    /// See `resume_next`.
    pub resume_runs: u64,
    /// Open peer links into this runtime (`crate::link`), written by the host: the relay
    /// looks at its inboxes only while this is non-zero (it reads the word with the
    /// rest of its poll, so a runtime without peer links pays nothing for them).
    pub peers: u64,
    /// Time slices the relay has seen taken from its kernel: how often one
    /// of its clock readings (every 16th poll) found `%globaltimer` moved by more than
    /// [`SLICE_GAP_NS`] since the last, which happens when another context (another process, without MPS) runs
    /// its slice of the GPU. Written by the relay alone (relaxed, system scope: a hint
    /// that nothing is read through), kept across relaunches (a relaunched relay counts
    /// on from it); read by the host, whose default residency lets the kernel go as
    /// soon as the queue drains while slices are being taken (`host/runtime/residency.rs`).
    pub slices: u64,
    /// The last such gap, in nanoseconds (written before `slices`).
    pub slice_ns: u64,
    /// Fills the relay's line to 128 bytes; unused.
    pub _pad: [u64; 9],
    /// Device address of the host ring (mapped pinned memory, slot 0), written by the
    /// host before the relay starts: a run over the ring ([`RING_RUN`]) needs no
    /// address in its entry, the relay computes it (device/src/relay.rs, step 7).
    pub host_ring: u64,
    /// Fills the line to 128 bytes; unused.
    pub _pad2: [u64; 15],
    /// The host's copy of the table of list runs (`crate::lists`): entry `r %
    /// LIST_RUNS` describes run `r`, whose tasks lie in the host ring (mapped pinned
    /// memory; `span` has [`RING_RUN`] set, `addr` is unused) or in a resident list.
    /// Written by the host, `span` last and with release: a run is committed when its
    /// `span` is; read by the relay.
    pub runs: [ListRun; LIST_RUNS],
    /// The inline slots: task `seq` travels in slot `seq % LL_SLOTS`. Written by the
    /// host, read by the relay.
    pub slots: [LlSlot; LL_SLOTS],
}
const _: () = assert!(size_of::<RelayMailbox>() == 256 + LIST_RUNS * 16 + LL_SLOTS * 128);
const _: () = assert!(core::mem::offset_of!(RelayMailbox, host_ring) == 128);
const _: () = assert!(core::mem::offset_of!(RelayMailbox, slots) == 256 + LIST_RUNS * 16);
