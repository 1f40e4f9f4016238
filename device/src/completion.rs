//! Completing a task (step 4 of the queue protocol): per-segment counting in device
//! memory, one record per segment over PCIe. The layouts and the segment encoding are
//! in `resident_shared::segment`; the host side is `host/queue/completions.rs`.
//!
//! Orderings, for a task `t` of segment `s` (first sequence number `f`):
//! 1. `t`'s lanes write its outputs.
//! 2. `bar.warp.sync`: every lane's writes happen before lane 0's next operations.
//!    Lane 0 may write `t`'s [`Completion`] record (weak stores: only when the task
//!    failed or its ticket wants results).
//!
//!    An express task (`task_flags::EXPRESS`, a lone task whose ticket resolves from
//!    its record) always has its record written, released at system scope on its own
//!    (`Completer::record`): the host's ticket needs no segment record.
//! 3. Lane 0 adds one to `t`'s signal counter, if any (`atom.acq_rel.gpu`: the release
//!    that a dependent task's acquire load pairs with, `crate::deps`), before it writes
//!    the record of 2 (lane 0's program order; an express record's system-scope release
//!    is cumulative): a host that waited for an express task's ticket sees its signal.
//! 4. Lane 0 adds to `counts[s].state` with a 64-bit `atom.acq_rel.gpu` (1, or
//!    1 + 2^32 for a failure: `resident_shared::segment::SegmentCount`). Each such add
//!    acquires every earlier add of the segment (they form one chain of read-modify-
//!    writes on one address), so the add that brings the count to the segment's length
//!    happens after every task of the segment, children included, did steps 1-3; its
//!    result also holds the failure count, so the finisher needs no other load.
//!    With `worker_flags::RELEASE_COUNT` the add is `atom.release.gpu` and only the
//!    finisher acquires, by a `fence.acq_rel.gpu` after its add (an acquire pattern):
//!    the later adds of the chain extend each earlier add's release sequence, so the
//!    fence synchronizes with every one of them.
//!
//!    Children (step 4'): a child (popped in a batch, `crate::spawn`) is not counted
//!    on its own: lane 0 adds its `1` (or `1 + 2^32`) to the warp's `PendingCount`
//!    (warp-private memory), and adds the sum to the segment's count, as in 4, when the
//!    batch ends or its next child is another segment's (or a peer link's task, or of
//!    another type): the sum is always of one segment, and no child of another ticket
//!    runs while it waits. That one add releases every child of the sum: each child's
//!    step 2 barrier put its lanes' writes before lane 0's later operations, and
//!    release is cumulative. Deferring a child's add only delays its segment: the
//!    parent's `-1` was added before the push (`crate::spawn`, step 7), so no count can
//!    reach the length early. A batch
//!    holds at most `POP_BATCH` children of one popper, run one after another before
//!    the warp waits for anything else: a child must not wait (spin) for another
//!    child, which may sit behind it in the same batch (docs/custom-tasks.md).
//! 5. That worker (the finisher) resets the count, stores `failed` into the segment's
//!    [`SegmentDone`], fences `acq_rel.sys` and stores `stamp` relaxed at system scope:
//!    a release pattern at system scope that the host's acquire load of `stamp` pairs
//!    with. Release is cumulative, so the host then sees every write of every task of
//!    the segment (outputs, records).
//!
//! The count is reset before the release in 5, and its entry is used again only by a
//! segment published after the host saw `stamp` (ring space), so the next lap's first
//! add sees zero.

use resident_shared::segment::{self, SegmentCount, SegmentDone};
use resident_shared::{Completion, KernelParams, Status, Task, stamp_for, task_flags, worker_flags};

use resident_shared::spawn::{POP_BATCH, PendingCount};

use crate::arch;
use crate::task::Outcome;

/// Where completions go: the per-task records, the segment counts and the segment
/// records.
pub struct Completer {
    completions: *mut Completion,
    counts: *mut SegmentCount,
    done: *mut SegmentDone,
    counters: *mut u32,
    mask: u32,
    /// `worker_flags::RELEASE_COUNT`: release adds, the finisher acquires by a fence.
    release_count: bool,
}

impl Completer {
    /// # Safety
    /// The addresses in `p` must be valid for the life of the loop.
    pub unsafe fn new(p: &KernelParams) -> Self {
        Self {
            completions: p.completions as *mut Completion,
            counts: p.segment_counts as *mut SegmentCount,
            done: p.segment_done as *mut SegmentDone,
            counters: p.counters as *mut u32,
            mask: p.capacity - 1,
            release_count: p.flags & worker_flags::RELEASE_COUNT != 0,
        }
    }

    /// The segment counts, for [`crate::TaskCx::spawn`].
    pub fn counts(&self) -> *mut SegmentCount {
        self.counts
    }

    /// Entry index and length of the segment that task `seq` is counted in.
    #[inline(always)]
    fn segment_of(&self, seq: u32, task: &Task) -> (u32, u32) {
        if task.flags & task_flags::CHILD != 0 {
            (segment::child_index(task.seg) & self.mask, segment::child_length(task.seg))
        } else {
            (seq.wrapping_sub(segment::offset(task.seg)) & self.mask, segment::length(task.seg))
        }
    }

    /// Task `seq`'s segment as a child's `seg` word: where its children are counted.
    #[inline(always)]
    pub fn child_seg(&self, seq: u32, task: &Task) -> u32 {
        if task.flags & task_flags::PEER != 0 {
            // A peer link's task belongs to no segment: no children (`crate::inbox`).
            return segment::NO_PARENT;
        }
        let (index, len) = self.segment_of(seq, task);
        segment::child(index, len)
    }

    /// The value of the segment's `cancel` word that cancels task `seq`
    /// ([`crate::TaskCx::cancelled`]): `stamp_for` of its segment's first task; 0 for a
    /// pushed child (its segment's first is not known here: children are not
    /// cancellable).
    #[inline(always)]
    pub fn cancel_stamp(&self, seq: u32, task: &Task) -> u32 {
        if task.flags & task_flags::CHILD != 0 { 0 } else { stamp_for(seq.wrapping_sub(segment::offset(task.seg))) }
    }

    /// Completes task `seq` with `out`. Every lane must call, after every lane is done
    /// with the task.
    ///
    /// # Safety
    /// `task` must be the task of slot `seq`, run once, and completed once; a child
    /// must be entry `seq` of this warp's batch area (`SpawnRing::batched`), the
    /// batch's entries below it still to run.
    #[inline(always)]
    pub unsafe fn complete(&self, seq: u32, task: &Task, out: Outcome) {
        let child = task.flags & task_flags::CHILD != 0;
        // Run by the relay warp already (device/src/relay.rs): its record and signal are
        // written; only its count is left.
        let relayed = task.flags & task_flags::RELAYED != 0;
        let (index, len) = self.segment_of(seq, task);
        let failed = out.status != Status::Ok;
        // Step 2: every lane's writes of this task before lane 0's stores below.
        arch::syncwarp();
        if arch::lane_id() != 0 {
            return;
        }
        if task.flags & task_flags::PEER != 0 {
            // A peer link's task (`crate::inbox`, I4): counted in its inbox's `done`
            // word, which `seg` and `wait_value` name (set by this runtime's relay),
            // with a release add (this task's writes, and a failure's count in the
            // next word, first); no segment, no record.
            let at = ((task.wait_value as u64) << 32 | task.seg as u64) as *mut u64;
            unsafe {
                if failed {
                    arch::atom_add_relaxed_gpu_u64(at.add(1), 1);
                }
                arch::atom_add_release_gpu_u64(at, 1);
            }
            return;
        }
        // Step 3 before step 2's express record: an express task's ticket resolves from
        // its record, so a signal after it could still be missing when the host's wait
        // returns (hostile_cpu's foreign_counter_refused read the counter at 0 after
        // the wait, once in a CI run).
        if !relayed {
            unsafe { crate::deps::signal(self.counters, task) };
        }
        if !child && !relayed {
            let express = task.flags & task_flags::EXPRESS != 0;
            if failed || express || task.flags & task_flags::RESULT != 0 {
                unsafe { self.record(seq, out, express) };
            }
        }
        let mut add = segment::completion_add(failed);
        if child {
            // Step 4': joins the warp's pending sum (always of this child's segment: a
            // sum is counted before a child of another segment runs), counted now if
            // the batch ends here or its next child, entry `seq - 1`, is another. The
            // sum lies after the batch's entries (entry `POP_BATCH`,
            // `SpawnRing::batched`): found from this child's entry, with no other state.
            let at = task as *const Task;
            let p = at.wrapping_add((POP_BATCH - seq) as usize) as *mut PendingCount;
            // Entries compared by their first 8 bytes (opcode, flags, seg): a peer link's
            // task (flags `CHILD | PEER`, counted elsewhere, its `seg` naming no segment)
            // is always another; so is a child of another type (a count early, no more).
            let word = |t: *const Task| unsafe { core::ptr::read_volatile(t as *const u64) };
            unsafe {
                add = add.wrapping_add(core::ptr::read_volatile(&raw const (*p).add));
                let keep = seq > 0 && word(at.wrapping_sub(1)) == word(at);
                core::ptr::write_volatile(&raw mut (*p).add, if keep { add } else { 0 });
                if keep {
                    return;
                }
            }
        }
        let c = unsafe { self.counts.add(index as usize) };
        unsafe {
            if !child && segment::offset(task.seg) == 0 {
                // Relaxed: published by this task's release add below.
                arch::st_relaxed_gpu(&raw mut (*c).first, seq);
            }
            // Step 4: release this task's writes (a child's: every child of the sum),
            // acquire every earlier task's. The add counts a failure too
            // (`SegmentCount::state`).
            let before = if self.release_count {
                arch::atom_add_release_gpu_u64(&raw mut (*c).state, add)
            } else {
                arch::atom_add_acq_rel_gpu_u64(&raw mut (*c).state, add)
            };
            if let Some(failures) = segment::finished(before.wrapping_add(add), len) {
                if self.release_count {
                    // The acquire pattern of step 4 (a fence after the add), before
                    // `first` is read and the segment finished.
                    arch::fence_acq_rel_gpu();
                }
                // A queue task knows its segment's start; a child reads what the
                // first task stored (acquired through the add chain).
                let first = if child { arch::ld_relaxed_gpu(&raw const (*c).first) } else { seq.wrapping_sub(segment::offset(task.seg)) };
                self.finish(index, c, first, failures);
            }
        }
    }

    /// Writes task `seq`'s [`Completion`] record (lane 0, after the warp barrier of
    /// step 2). Weak stores, published by the segment's release (steps 4-5); or, for an
    /// express task, released at once: `fence.acq_rel.sys` then `st.relaxed.sys` of the
    /// stamp, which the host's acquire load of the stamp pairs with
    /// (`host/queue/completions.rs`, `read_express`). The fence follows the warp
    /// barrier, so it orders every lane's writes of the task (cumulativity).
    ///
    /// # Safety
    /// `seq` must be a live task of this queue, completed once.
    #[inline(always)]
    pub unsafe fn record(&self, seq: u32, out: Outcome, release: bool) {
        let rec = unsafe { self.completions.add((seq & self.mask) as usize) };
        unsafe {
            core::ptr::write_volatile(&raw mut (*rec).status, out.status as u32);
            core::ptr::write_volatile(&raw mut (*rec).result, out.result);
            if release {
                arch::fence_acq_rel_sys();
                arch::st_relaxed_sys(&raw mut (*rec).stamp, stamp_for(seq));
            } else {
                core::ptr::write_volatile(&raw mut (*rec).stamp, stamp_for(seq));
            }
        }
    }

    /// Step 5, by the worker whose add completed segment `index`.
    #[inline(always)]
    unsafe fn finish(&self, index: u32, c: *mut SegmentCount, first: u32, failed: u32) {
        unsafe {
            arch::st_relaxed_gpu_u64(&raw mut (*c).state, 0);
            // A cancel of this segment is moot now (`SegmentCount::cancel`).
            arch::st_relaxed_gpu(&raw mut (*c).cancel, 0);
            let d = self.done.add(index as usize);
            core::ptr::write_volatile(&raw mut (*d).failed, failed);
            // One MEMBAR.SYS per segment: orders everything the segment's tasks wrote
            // (acquired through the count) before the stamp, for the host.
            arch::fence_acq_rel_sys();
            arch::st_relaxed_sys(&raw mut (*d).stamp, stamp_for(first));
        }
    }
}
