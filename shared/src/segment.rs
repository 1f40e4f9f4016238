//! Completion segments: how the device tells the host that tasks are done without one
//! record per task.
//!
//! The runtime cuts every submitted batch into segments of at most `size` consecutive
//! tasks ([`segment_size`]; segment `k` of a batch starting at `first` covers
//! `[first + k * size, min(first + (k + 1) * size, end))`). Each task carries, in
//! [`crate::Task::seg`], its offset in its segment and the segment's length. A worker
//! that finishes a task adds one to the segment's [`SegmentCount`] in device memory; the
//! worker whose add completes the segment writes one [`SegmentDone`] record into mapped
//! pinned memory, which is what the host polls. One system-scope fence and one PCIe
//! write per segment instead of per task.
//!
//! Both arrays have one entry per ring slot and are indexed by the segment's first
//! sequence number modulo the capacity: live segments are disjoint ranges of live
//! slots, so their entries never collide. A per-task [`crate::Completion`] record is
//! written only when the host needs it: the task failed, or its ticket wants results.

use bytemuck::{Pod, Zeroable};

/// Most tasks in one segment.
pub const SEGMENT: u32 = 1024;

/// The segment size of a ring of `capacity` slots: at most half the ring, so that the
/// producer can always publish a whole segment before it must wait for one to finish
/// (a segment split across a wait for its own completion would never finish).
#[inline]
pub const fn segment_size(capacity: u32) -> u32 {
    if capacity / 2 < SEGMENT { capacity / 2 } else { SEGMENT }
}

/// Bits of an absolute segment index in a child task's `seg` word; the length takes
/// the bits above. Bounds the ring capacity.
pub const CHILD_INDEX_BITS: u32 = 21;

/// Largest ring capacity the segment encoding allows.
pub const MAX_CAPACITY: u32 = 1 << CHILD_INDEX_BITS;

/// The `seg` word of the task at `index` of a batch of `len` tasks, in segments of
/// `size` tasks.
#[inline]
pub const fn encode(index: u32, len: u32, size: u32) -> u32 {
    let off = index % size;
    let start = index - off;
    let seg_len = if len - start < size { len - start } else { size };
    off | seg_len << 16
}

/// Offset of a (non-child) task in its segment.
#[inline]
pub const fn offset(seg: u32) -> u32 {
    seg & 0xffff
}

/// Length of a (non-child) task's segment.
#[inline]
pub const fn length(seg: u32) -> u32 {
    seg >> 16
}

/// The `seg` word of a child task pushed by a task of segment `index` (an entry index,
/// `first % capacity`) of length `len`.
#[inline]
pub const fn child(index: u32, len: u32) -> u32 {
    index | len << CHILD_INDEX_BITS
}

/// The child `seg` word of a task that may not push children (a peer link's task,
/// [`crate::task_flags::PEER`]): no [`child`] word is ever this.
pub const NO_PARENT: u32 = u32::MAX;
const _: () = assert!(child(MAX_CAPACITY - 1, SEGMENT) != NO_PARENT);

/// Entry index named by a child's `seg` word.
#[inline]
pub const fn child_index(seg: u32) -> u32 {
    seg & (MAX_CAPACITY - 1)
}

/// Segment length named by a child's `seg` word.
#[inline]
pub const fn child_length(seg: u32) -> u32 {
    seg >> CHILD_INDEX_BITS
}

/// Per-segment progress, in device memory, updated with GPU-scope atomics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(16))]
pub struct SegmentCount {
    /// One 64-bit counter, changed only by 64-bit atomic adds: every completing task
    /// adds 1, a failing one 1 + 2^32, a parent adds -1 before it pushes a child. The
    /// sum of all adds is `len + failed * 2^32` once every task of the segment,
    /// children included, has completed; before that the low 32 bits (tasks completed
    /// minus children outstanding) are below `len`, and never 2^31 away from it (at
    /// most 2^21 slots and 2^24 children). So the add that makes the low half `len`
    /// finishes the segment, and its result's high half is the failure count: the
    /// finisher learns both from its own add, with no further load.
    pub state: u64,
    /// The segment's first sequence number, stored by its first task (offset 0) before
    /// its count: the completing worker, a child's perhaps, needs it for the stamp.
    pub first: u32,
    /// `stamp_for(first)` while the host cancels the segment's ticket (written by the
    /// host, read by the segment's tasks where they wait or poll:
    /// `resident_device::TaskCx::cancelled`); any other value means "not cancelled".
    /// A value left from a segment that used the entry before names that segment's
    /// first task, never this one's; the finisher clears it.
    pub cancel: u32,
}
const _: () = assert!(core::mem::size_of::<SegmentCount>() == 16);

/// What a task adds to [`SegmentCount::state`] when it completes.
#[inline]
pub const fn completion_add(failed: bool) -> u64 {
    if failed { 1 | 1 << 32 } else { 1 }
}

/// What a parent adds before it pushes a child: -1.
pub const CHILD_ADD: u64 = u64::MAX;

/// Whether `state` (after an add) says the segment of `len` tasks is complete, and if
/// so how many of its tasks failed.
#[inline]
pub const fn finished(state: u64, len: u32) -> Option<u32> {
    if state as u32 == len { Some((state >> 32) as u32) } else { None }
}

/// Written once per segment by the worker that completes it, into mapped pinned memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(8))]
pub struct SegmentDone {
    /// `stamp_for(first)`, stored last (release, .sys): the host's acquire load of it
    /// makes `failed`, the segment's per-task records and its tasks' writes visible.
    pub stamp: u32,
    /// How many of the segment's tasks failed, children included; stored before
    /// `stamp`.
    pub failed: u32,
}
const _: () = assert!(core::mem::size_of::<SegmentDone>() == 8);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cover_a_batch() {
        for (len, size) in [(1u32, SEGMENT), (2, SEGMENT), (1023, SEGMENT), (1024, SEGMENT), (1025, SEGMENT), (5000, SEGMENT), (300, 32)] {
            let mut covered = 0;
            let mut i = 0;
            while i < len {
                let s = encode(i, len, size);
                assert_eq!(offset(s), 0);
                assert!(length(s) <= size);
                for k in 0..length(s) {
                    assert_eq!(encode(i + k, len, size), k | length(s) << 16);
                }
                covered += length(s);
                i += length(s);
            }
            assert_eq!(covered, len);
        }
        assert_eq!(segment_size(64), 32);
        assert_eq!(segment_size(1 << 18), SEGMENT);
        let c = child(MAX_CAPACITY - 1, SEGMENT);
        assert_eq!((child_index(c), child_length(c)), (MAX_CAPACITY - 1, SEGMENT));
    }
}
