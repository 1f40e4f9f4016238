//! Kernel parameters, passed by value as one struct (a `#[repr(C)]` by-value kernel
//! parameter works with rustc's nvptx backend; verified on an H100).

use bytemuck::{Pod, Zeroable};

use crate::Task;

/// Everything the persistent loop needs, as device addresses (CUDA) or host addresses
/// (CPU backend).
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
pub struct KernelParams {
    /// `capacity` task slots.
    pub ring: u64,
    /// The [`crate::QueueHeader`].
    pub header: u64,
    /// `capacity` per-task [`crate::Completion`] records (mapped pinned memory).
    pub completions: u64,
    /// `capacity` [`crate::SegmentCount`]s (device memory).
    pub segment_counts: u64,
    /// `capacity` [`crate::SegmentDone`] records (mapped pinned memory).
    pub segment_done: u64,
    /// `MAX_BUFFERS` [`crate::BufferEntry`] records.
    pub buffers: u64,
    /// `MAX_COUNTERS` `u32` device counters.
    pub counters: u64,
    /// Number of slots; a power of two.
    pub capacity: u32,
    /// Slots claimed per atomic increment; a power of two, at most the warp width.
    pub claim: u32,
    /// [`worker_flags`] bits: worker policies, chosen by measurement.
    pub flags: u32,
    /// Longest sleep between two polls of an empty queue, in nanoseconds.
    pub max_sleep_ns: u32,
    /// The spawn ring ([`crate::spawn`]): header, sequence words, slots.
    pub spawn: u64,
    /// Spawn slots; a power of two.
    pub spawn_capacity: u32,
    /// Warps (GPU) or threads (CPU) running the persistent loop: each adds one to
    /// `QueueHeader::exited` as it leaves, and the relay stays until all have.
    pub workers: u32,
    /// The relay's [`crate::relay::RelayMailbox`] (mapped pinned memory; device address).
    pub relay: u64,
    /// The table of list runs ([`crate::lists`]): `LIST_RUNS` entries; null for none.
    pub lists: u64,
    /// Profiling builds only (`RESIDENT_DEVICE_TIMING`, docs/profiling.md): per worker
    /// warp, [`crate::steps::STEPS`] cycle counts of the loop's steps (mapped pinned
    /// memory; device address). Null otherwise, and ignored by ordinary builds.
    pub steps: u64,
}
const _: () = assert!(core::mem::size_of::<KernelParams>() == 112);

/// Policies of the persistent loop (see `device/src/worker.rs`).
pub mod worker_flags {
    /// Issue the next claim's atomic before running the last task of the current range.
    pub const PRECLAIM: u32 = 2;
    /// Count a task's completion with a release add (`atom.release.gpu`) instead of an
    /// acquire-release one; the add that finishes a segment acquires with a fence
    /// after it (device/src/completion.rs, step 4). Spares every task the acquire's
    /// L1 invalidation, which also drops the other warps' cached lines on that SM (the
    /// buffer-table entries among them). On by default since 2026-11-24.
    pub const RELEASE_COUNT: u32 = 4;
    /// Look for children in the spawn ring only after every 4th queue task (by sequence
    /// number; also after a child, after a task that pushed one, and on idle polls)
    /// instead of after every task: spares most tasks the dependent load of the ring's
    /// two counters before the next slot's read (device/src/worker.rs). On by default
    /// since 2026-11-27: 3-4% off host-fed 20k batches in one set of runs (before the
    /// look after a pushing task was added), within the noise in a later set, the
    /// one-task round trip unchanged (H100).
    pub const SPARSE_LOOK: u32 = 8;
}

/// Parameters of the one-launch-per-task baseline kernel: one task, by value.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
pub struct OneTaskParams {
    /// The task to run.
    pub task: Task,
    /// Where to write the completion (device address).
    pub completion: u64,
    /// The buffer table.
    pub buffers: u64,
    /// The task's sequence number; the record's stamp is `stamp_for(seq)`.
    pub seq: u32,
    /// Fills the struct to 128 bytes; unused.
    pub _pad: [u32; 11],
}
const _: () = assert!(core::mem::size_of::<OneTaskParams>() == 128);

/// Parameters of the one-launch-over-a-table baseline kernel (`resident_table`): the
/// launch a CUDA programmer writes for a known set of tasks, one warp per task of a
/// table in device memory, each run by the set's dispatch (a switch on its id), with no
/// queue, no claim and no completion records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct TableParams {
    /// Device address of `len` tasks, placed as the runtime places them (`flags` and
    /// `seg` zero: not counted, not recorded).
    pub tasks: u64,
    /// The buffer table.
    pub buffers: u64,
    /// Tasks in the table; warps past it do nothing.
    pub len: u32,
    /// Fills the struct to 32 bytes; unused.
    pub _pad: [u32; 3],
}
const _: () = assert!(core::mem::size_of::<TableParams>() == 32);
