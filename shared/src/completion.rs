//! The completion record a worker writes for every task, into a ring in mapped pinned
//! host memory (CUDA) or ordinary memory (CPU backend), at index `seq % capacity`.

use bytemuck::{Pod, Zeroable};

/// Written by the device, read by the host. `status` and `result` are plain stores;
/// `stamp` is stored last with release semantics at system scope (see
/// docs/architecture.md), so a host that reads `stamp == stamp_for(seq)` with acquire
/// may then read the other two fields of task `seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(16))]
pub struct Completion {
    /// [`stamp_for`]`(seq)` once the record of task `seq` is written; stored last.
    pub stamp: u32,
    /// A [`crate::Status`] code.
    pub status: u32,
    /// The task's inline result (meaning depends on the opcode).
    pub result: u64,
}
const _: () = assert!(core::mem::size_of::<Completion>() == 16);

/// The stamp that marks the record of task `seq` as written: `seq + 1`, so that a
/// record left from lap `seq - capacity` (capacity < 2^31) never matches. A record left
/// from 2^32 tasks earlier would (the stamp wraps), so the host never leaves one: it
/// resets every record it has read, and every record of a new ring, to
/// [`spent_stamp`].
#[inline]
pub const fn stamp_for(seq: u32) -> u32 {
    seq.wrapping_add(1)
}

/// What a record at the index of task `seq` holds while no task's stamp may be read
/// there (before the first write, after the host read it): `seq + 2`, which no task
/// whose record lies at that index (`seq + k * capacity`, capacity a power of two of at
/// least 4) ever stamps. So a stale record never reads as written, however many laps
/// pass.
#[inline]
pub const fn spent_stamp(seq: u32) -> u32 {
    seq.wrapping_add(2)
}
