//! The consumer side of the work queue, run by every worker warp.
//!
//! Protocol (the host side is in `host/queue/`; docs/protocol.md has the whole):
//! 1. Claim: lane 0 adds `claim` to `header.head` (relaxed, .gpu) and broadcasts the old
//!    value: the warp now owns slots `[first, first + claim)`. The claim carries no
//!    ordering; it only hands out tickets. Every ticket is served: the owner waits
//!    for its slot, however long, until the queue stops.
//! 2. Wait: every lane polls `header.tail` (relaxed, system scope) until all lanes see
//!    `seq < tail`, then loads it again with acquire at system scope. That load pairs
//!    with the host's publication of `tail`, a copy on the transfer stream that stream
//!    order starts only after the copy of the slots: so the slot's bytes are visible
//!    once `tail` is. Each lane keeps the last `tail` it acquired: an acquire that saw
//!    `tail > seq` already orders every later load, so a slot below it needs no new
//!    load. Polls are relaxed: an acquire load invalidates the SM's L1
//!    (`DeviceQueue::acquire_tail`).
//! 3. Run the task (after its dependency, if it has one: `crate::deps`).
//! 4. Complete: counted per segment, see `crate::completion`.
//! 5. Stop: the terminate sentinel stores its own sequence number in `stop_at` and then
//!    releases `stop` (.gpu); a waiting warp that acquires `stop` and holds a slot after
//!    `stop_at` leaves. Every slot before the sentinel was published before it, so no
//!    task is dropped. `abort` (written by the host) makes waiting warps leave at once.

use resident_shared::{KernelParams, QueueHeader, Task, seq_before};

use crate::arch;
use crate::spawn::SpawnRing;

/// An idle warp checks for stop, abort and children on every this many polls.
pub const FULL_POLL_EVERY: u32 = 4;

/// Whether a worker may run its slot or must leave.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Wait {
    /// The slot is published: run it.
    Ready,
    /// Not yet published: poll again (after a sleep, unless a child may be waiting).
    Pending {
        /// The spawn ring's counters differ: a child may be waiting to be popped.
        children: bool,
    },
    /// The terminate sentinel came before this slot: leave once the spawn ring is empty.
    Stop,
    /// The host aborted: leave now.
    Abort,
}

/// The queue as one worker sees it.
pub struct DeviceQueue {
    ring: *const Task,
    header: *mut QueueHeader,
    mask: u32,
    /// Slots claimed per atomic add on `head` (`KernelParams::claim`).
    pub claim: u32,
    /// Longest sleep between two polls (`KernelParams::max_sleep_ns`). Bounds the
    /// wake-up latency that an idle warp adds, and keeps the poll rate of thousands of
    /// idle warps on one L2 line at about one per warp per this many nanoseconds.
    max_sleep: u32,
}

impl DeviceQueue {
    /// # Safety
    /// The addresses in `p` must be valid for the life of the loop, `capacity` a power of
    /// two and `claim` a power of two no larger than [`arch::WARP`].
    pub unsafe fn new(p: &KernelParams) -> Self {
        Self {
            ring: p.ring as *const Task,
            header: p.header as *mut QueueHeader,
            mask: p.capacity - 1,
            claim: p.claim,
            max_sleep: p.max_sleep_ns.max(32),
        }
    }

    /// The queue's [`QueueHeader`] (`KernelParams::header`).
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

    /// Step 2, one poll: whether slot `seq` is published, and on every
    /// [`FULL_POLL_EVERY`]th poll (`full`) also whether the queue stops and whether a
    /// child may be waiting in `spawn`. The caller sleeps between polls that return
    /// `Pending` with no child (`crate::worker`). `tail_seen` is this lane's last
    /// acquired `tail`; a slot below it needs no load at all.
    ///
    /// Thousands of idle warps poll the same few L2 lines, so a poll is one load
    /// (`tail`) and the rest comes every few polls: with every check on every poll,
    /// a one-task round trip took 10.3 µs instead of 8.1 at a 128 ns poll sleep (H200,
    /// 2026-11-23). A full poll has all its loads in flight at once: `abort`, `stop`,
    /// the spawn ring's counters and `tail`, all relaxed; `stop` is ordered by a fence
    /// only on the rare path that reads through it, and `tail` by a second load, with
    /// acquire, once it shows the slot ([`DeviceQueue::acquire_tail`]).
    ///
    /// # Safety
    /// `seq` must be a slot this warp claimed and has not run; every lane must call.
    #[inline(always)]
    pub unsafe fn poll_published(&self, seq: u32, tail_seen: &mut u32, spawn: &SpawnRing, full: bool) -> Wait {
        if arch::all_lanes(self.published(seq, *tail_seen)) {
            return Wait::Ready;
        }
        let h = self.header;
        if !full {
            // Relaxed, .sys; acquired by `acquire_tail` once it shows the slot.
            let tail = unsafe { arch::ld_relaxed_sys(&raw const (*h).tail.value) };
            if arch::all_lanes(self.published(seq, tail)) {
                return unsafe { self.acquire_tail(seq, tail_seen) };
            }
            return Wait::Pending { children: false };
        }
        // Relaxed: only read to decide to leave (abort reads nothing through it).
        let abort = unsafe { arch::ld_relaxed_sys(&raw const (*h).abort.value) };
        // Relaxed, then the fence below on the path that reads `stop_at`.
        let stop = unsafe { arch::ld_relaxed_gpu(&raw const (*h).stop.value) };
        let (enqueued, dequeued) = unsafe { spawn.counts() };
        // Relaxed, .sys; acquired by `acquire_tail` once it shows the slot.
        let tail = unsafe { arch::ld_relaxed_sys(&raw const (*h).tail.value) };
        if arch::all_lanes(self.published(seq, tail)) {
            return unsafe { self.acquire_tail(seq, tail_seen) };
        }
        let children = SpawnRing::differ(enqueued, dequeued);
        if abort != 0 {
            return Wait::Abort;
        }
        if stop != 0 {
            // Acquire pattern (relaxed load of `stop` that saw the sentinel's release,
            // then this fence), .gpu: pairs with the sentinel's release of `stop`
            // (step 5); `stop_at` is read after it.
            arch::fence_acq_rel_gpu();
            let stop_at = unsafe { arch::ld_relaxed_gpu(&raw const (*h).stop_at.value) };
            if seq_before(stop_at, seq) {
                return Wait::Stop;
            }
        }
        Wait::Pending { children }
    }

    /// The acquire of a poll that saw slot `seq` published (a relaxed load of `tail`
    /// showed it): `tail` loaded again, with acquire at system scope, into `tail_seen`.
    /// That load pairs with the host's copy into `tail`, which stream order places after
    /// the copy of the slots (docs/protocol.md), and with the relay's st.release.gpu of
    /// `tail` (device/src/relay.rs, step 3). It reads the relaxed load's value or a later
    /// one (`tail` only grows, and a claimed slot that has not run holds it within
    /// `capacity` of `seq`), so the slot stays published under it.
    ///
    /// Only the poll that finds its slot acquires: an acquire load invalidates the SM's
    /// L1 (`CCTL.IVALL` after the load), where busy warps keep their tasks' records and
    /// the buffer table, and thousands of idle warps poll a few times a microsecond.
    ///
    /// # Safety
    /// As for [`DeviceQueue::poll_published`].
    #[inline(always)]
    unsafe fn acquire_tail(&self, seq: u32, tail_seen: &mut u32) -> Wait {
        *tail_seen = unsafe { arch::ld_acquire_sys(&raw const (*self.header).tail.value) };
        if arch::all_lanes(self.published(seq, *tail_seen)) { Wait::Ready } else { Wait::Pending { children: false } }
    }

    /// Sleep before the next poll: doubles from 32 ns up to `max_sleep`.
    #[inline(always)]
    pub fn backoff(&self, sleep: &mut u32) {
        arch::nanosleep(*sleep);
        *sleep = (*sleep * 2).clamp(32, self.max_sleep);
    }

    /// Slot `seq` (claimed, not yet run) is published under `tail`. A claimed slot that
    /// has not run holds back the producer, so a live `tail` is at most `capacity` past
    /// it: the window `1 <= tail - seq <= capacity` also rejects a cached `tail` that
    /// has fallen 2^31 behind (a warp parked in a very long task).
    #[inline(always)]
    fn published(&self, seq: u32, tail: u32) -> bool {
        tail.wrapping_sub(seq).wrapping_sub(1) <= self.mask
    }

    /// Slot `seq`, read in place by the task code.
    ///
    /// # Safety (of reading it)
    /// Only after `poll_published(seq)` returned `Ready`. Plain loads are enough: they
    /// follow this lane's acquire of `tail`, which on the GPU also invalidates any stale
    /// L1 copy of the slot from an earlier lap. The slot is not written again before
    /// the task completes (the host reuses it only after its segment's stamp).
    #[inline(always)]
    pub fn slot(&self, seq: u32) -> *const Task {
        self.ring.wrapping_add((seq & self.mask) as usize)
    }
}
