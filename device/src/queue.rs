//! The consumer side of the work queue, run by every worker warp.
//!
//! Protocol (the host side is in `host/queue/`; docs/architecture.md has the whole):
//! 1. Claim: lane 0 adds `claim` to `header.head` (relaxed, .gpu) and broadcasts the old
//!    value: the warp now owns slots `[first, first + claim)`. The claim carries no
//!    ordering; it only hands out tickets. Every ticket is served: the owner waits
//!    for its slot, however long, until the queue stops. The atomic for the next range
//!    is issued before the last task of the current one runs, and its result broadcast
//!    only afterwards, so its latency hides behind the task.
//! 2. Wait: every lane loads `header.tail` with acquire at system scope until all lanes
//!    see `seq < tail`. That load pairs with the host's publication of `tail`, a copy on
//!    the transfer stream that stream order starts only after the copy of the slots:
//!    so the slot's bytes are visible once `tail` is. Each lane keeps the last `tail` it
//!    acquired: an acquire that saw `tail > seq` already orders every later load, so a
//!    slot below it needs no new load.
//! 3. Run the task, keep its completion (and its `seq`) in a register of lane `k`, for
//!    the warp's `k`-th held completion, across claims.
//! 4. Flush: each lane with a held completion stores `status` and `result` (weak), all
//!    lanes fence `acq_rel.sys`, then each stores `stamp` relaxed at system scope: a
//!    release pattern that the host's acquire load of `stamp` pairs with. One fence
//!    covers up to a warp's worth of completions; a warp flushes when it holds 32, and
//!    before it sleeps, so nothing it finished waits on work that has not arrived.
//! 5. Stop: the terminate sentinel stores its own sequence number in `stop_at` and then
//!    releases `stop` (.gpu); a waiting warp that acquires `stop` and holds a slot after
//!    `stop_at` leaves. Every slot before the sentinel was published before it, so no
//!    task is dropped. `abort` (written by the host) makes waiting warps leave at once.

use resident_shared::{Completion, KernelParams, QueueHeader, Task, seq_before, stamp_for};

use crate::arch;
use crate::tasks::Outcome;

/// Longest sleep between two polls of an empty queue. Bounds the wake-up latency that
/// an idle warp adds, and keeps the poll rate of thousands of idle warps on one L2 line
/// at about one per warp per this many nanoseconds.
pub const MAX_POLL_SLEEP_NS: u32 = 2_000;

/// Whether a worker may run its slot or must leave.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Wait {
    Ready,
    Stop,
}

/// The queue as one worker sees it.
pub struct DeviceQueue {
    ring: *const Task,
    header: *mut QueueHeader,
    completions: *mut Completion,
    mask: u32,
    pub claim: u32,
}

impl DeviceQueue {
    /// # Safety
    /// The addresses in `p` must be valid for the life of the loop, `capacity` a power of
    /// two and `claim` a power of two no larger than [`arch::WARP`].
    pub unsafe fn new(p: &KernelParams) -> Self {
        Self {
            ring: p.ring as *const Task,
            header: p.header as *mut QueueHeader,
            completions: p.completions as *mut Completion,
            mask: p.capacity - 1,
            claim: p.claim,
        }
    }

    #[inline(always)]
    pub fn header(&self) -> *mut QueueHeader {
        self.header
    }

    /// Step 1, first half: lane 0 issues the claim of the next `claim` slots. The
    /// result is needed only by [`DeviceQueue::claimed`], so the atomic's latency
    /// overlaps whatever the warp does in between.
    ///
    /// # Safety
    /// The queue must be live (see [`DeviceQueue::new`]). Every slot claimed must be
    /// waited for and run, or the warp must leave on `Stop`.
    #[inline(always)]
    pub unsafe fn start_claim(&self) -> u32 {
        let mut first = 0;
        if arch::lane_id() == 0 {
            // Relaxed: the claim only hands out a ticket; the slot's contents are
            // ordered by the acquire of `tail` in `wait_published`.
            first = unsafe { arch::atom_add_relaxed_gpu(&raw mut (*self.header).head.value, self.claim) };
        }
        first
    }

    /// Step 1, second half: the first claimed slot, in every lane.
    #[inline(always)]
    pub fn claimed(&self, started: u32) -> u32 {
        arch::shfl_idx(started, 0)
    }

    /// Step 2: returns once slot `seq` is published (or the queue stops), flushing held
    /// completions before sleeping. `tail_seen` is this lane's last acquired `tail`.
    ///
    /// # Safety
    /// `seq` must be a slot this warp claimed and has not run; every lane must call.
    #[inline(always)]
    pub unsafe fn wait_published(&self, seq: u32, held: &mut HeldCompletions, tail_seen: &mut u32) -> Wait {
        if arch::all_lanes(self.published(seq, *tail_seen)) {
            return Wait::Ready;
        }
        let h = self.header;
        let mut sleep = 0u32;
        loop {
            // Acquire, .sys: pairs with the host's copy into `tail`, which stream order
            // places after the copy of the slots (docs/architecture.md, step 5).
            *tail_seen = unsafe { arch::ld_acquire_sys(&raw const (*h).tail.value) };
            if arch::all_lanes(self.published(seq, *tail_seen)) {
                return Wait::Ready;
            }
            unsafe { held.flush(self) };
            // Acquire, .sys: the host writes `abort` through a stream memory operation.
            if unsafe { arch::ld_acquire_sys(&raw const (*h).abort.value) } != 0 {
                return Wait::Stop;
            }
            // Acquire, .gpu: pairs with the sentinel's release of `stop` (step 5).
            if unsafe { arch::ld_acquire_gpu(&raw const (*h).stop.value) } != 0 {
                let stop_at = unsafe { arch::ld_relaxed_gpu(&raw const (*h).stop_at.value) };
                if seq_before(stop_at, seq) {
                    return Wait::Stop;
                }
            }
            arch::nanosleep(sleep);
            sleep = (sleep * 2).clamp(32, MAX_POLL_SLEEP_NS);
        }
    }

    /// Slot `seq` (claimed, not yet run) is published under `tail`. A claimed slot that
    /// has not run holds back the producer, so a live `tail` is at most `capacity` past
    /// it: the window `1 <= tail - seq <= capacity` also rejects a cached `tail` that
    /// has fallen 2^31 behind (a warp parked in a very long task).
    #[inline(always)]
    fn published(&self, seq: u32, tail: u32) -> bool {
        tail.wrapping_sub(seq).wrapping_sub(1) <= self.mask
    }

    /// Reads slot `seq`.
    ///
    /// # Safety
    /// Only after `wait_published(seq)` returned `Ready`.
    #[inline(always)]
    pub unsafe fn read_task(&self, seq: u32) -> Task {
        // A plain load is enough: it follows this lane's acquire of `tail`, which on
        // the GPU also invalidates any stale L1 copy of the slot from an earlier lap.
        unsafe { self.ring.add((seq & self.mask) as usize).read() }
    }

    /// Stores one completion record (step 4); `stamp` last.
    #[inline(always)]
    unsafe fn store_payload(&self, seq: u32, out: Outcome) {
        let rec = unsafe { self.completions.add((seq & self.mask) as usize) };
        unsafe {
            core::ptr::write_volatile(&raw mut (*rec).status, out.status as u32);
            core::ptr::write_volatile(&raw mut (*rec).result, out.result);
        }
    }

    #[inline(always)]
    unsafe fn store_stamp(&self, seq: u32) {
        let rec = unsafe { self.completions.add((seq & self.mask) as usize) };
        // Relaxed, .sys, after the fence in `flush`: the release that the host's
        // acquire load of `stamp` pairs with.
        unsafe { arch::st_relaxed_sys(&raw mut (*rec).stamp, stamp_for(seq)) };
    }
}

/// Completions finished but not yet visible to the host: the `k`-th lives in lane `k`,
/// with its own sequence number (held tasks need not be consecutive).
pub struct HeldCompletions {
    count: u32,
    mine_seq: u32,
    mine: Outcome,
}

impl Default for HeldCompletions {
    fn default() -> Self {
        Self::new()
    }
}

impl HeldCompletions {
    pub const fn new() -> Self {
        Self { count: 0, mine_seq: 0, mine: Outcome::ok(0) }
    }

    /// Step 3: keeps the (warp-uniform) outcome of task `seq`; flushes a full warp.
    ///
    /// # Safety
    /// `seq` must be a task this warp ran, held once; every lane must call.
    #[inline(always)]
    pub unsafe fn hold(&mut self, q: &DeviceQueue, seq: u32, out: Outcome) {
        if arch::lane_id() == self.count {
            self.mine_seq = seq;
            self.mine = out;
        }
        self.count += 1;
        if self.count == arch::WARP {
            unsafe { self.flush(q) };
        }
    }

    /// Step 4: makes every held completion visible to the host.
    ///
    /// # Safety
    /// `q` must be the queue the completions belong to; every lane must call.
    #[inline(always)]
    pub unsafe fn flush(&mut self, q: &DeviceQueue) {
        if self.count == 0 {
            return;
        }
        let seq = self.mine_seq;
        let mine = arch::lane_id() < self.count;
        if mine {
            unsafe { q.store_payload(seq, self.mine) };
        }
        // Orders the payload stores above before the stamp stores below, at system
        // scope (one MEMBAR.SYS per flush, for up to WARP completions).
        arch::fence_acq_rel_sys();
        if mine {
            unsafe { q.store_stamp(seq) };
        }
        self.count = 0;
    }
}
