//! Device-side follow-up tasks: a running task pushes children into the spawn ring;
//! a worker pops them before it claims its next host task (with the default
//! `worker_flags::SPARSE_LOOK`: after a task that pushed children, after a child, after
//! every 4th queue task; device/src/worker.rs), and while it waits for the host. The
//! layout is `resident_shared::spawn`; docs/protocol.md has the whole.
//!
//! The ring is Vyukov's bounded MPMC queue. Slot `i` has a sequence word `seq[i]`
//! (stored as `seq - i`, so zeroed memory is the initial state). A pusher at position
//! `pos` owns slot `pos % cap` when `seq == pos`; a popper at `pos` owns it when
//! `seq == pos + 1`.
//!
//! Orderings (lane 0 of a warp does the ring operations; the task is read by all
//! lanes; `SpawnRing::try_push_warp`, the inbox warp's, pushes a range of slots, one
//! lane each, claimed by one compare-and-swap after every slot of it was seen free):
//! 1. Push: `ld.acquire.gpu` of `seq` (pairs with the last popper's release, so its
//!    reads of the slot are done), `atom.relaxed.gpu.cas` on `enqueue` to own the
//!    position, weak stores of the task, then `st.release.gpu seq = pos + 1`.
//!    After the release, the pusher adds 1 to `ready` (relaxed; a range push adds its
//!    length once).
//! 2. Pop (since session 22): take one of `ready` (a relaxed load that sees it
//!    positive, then `atom.relaxed.gpu.add` of -1 that finds it positive; one that
//!    does not adds the 1 back), then `atom.relaxed.gpu.add` of 1 on `dequeue` owns
//!    the next position: takes never outnumber the increments, each of which follows a
//!    pusher's claim, and positions are handed out in order, so the position is
//!    claimed by a pusher that will release it. Then `ld.acquire.gpu` of `seq` until
//!    it reads `pos + 1` (pairs with the push's release: the task's bytes are
//!    visible); every lane acquires `seq` again before reading the slot. The child runs
//!    in place; after its completion (which ends with `bar.warp.sync`), lane 0
//!    releases `seq = pos + cap` for the next lap's pusher. A pop that finds nothing to
//!    take reports empty only if `enqueue == dequeue` (else a push between its claim
//!    and its count, or a take being given back, is under way: it looks again).
//!    Until session 22 a pop was a compare-and-swap on `dequeue` that every idle warp
//!    tried: a spawned tree ran at 0.76 M tasks/s on 2112 warps (H100).
//! 3. Exactly once: a push position is owned by the one CAS that moved `enqueue` past
//!    it, a pop position by the one add that moved `dequeue` past it, and a slot's
//!    sequence word admits one pusher then one popper per lap.
//! 4. Completion: before the push, the parent adds -1 to its segment's `pending`
//!    (`crate::completion`). Its own +1 comes later in program order, so the segment
//!    cannot complete before the child is counted; the child's +1 happens after the
//!    -1 (release of `seq`, acquire by the popper), so the count only reaches the
//!    segment's length when the child, too, has completed.
//! 5. Shutdown: a worker leaves only after popping the ring empty. A push by a warp
//!    that is still running is drained by that warp before it leaves.

use resident_shared::spawn::{self, SpawnHeader};
use resident_shared::{KernelParams, Task};

use crate::arch;

/// The spawn ring as one worker sees it. Null (capacity 0) outside the queue.
#[derive(Clone, Copy)]
pub struct SpawnRing {
    header: *mut SpawnHeader,
    seqs: *mut u32,
    slots: *mut Task,
    mask: u32,
}

impl SpawnRing {
    /// # Safety
    /// `p.spawn` must hold a zeroed (or live) ring of `p.spawn_capacity` slots, a power
    /// of two, or be null with capacity 0.
    pub unsafe fn new(p: &KernelParams) -> Self {
        if p.spawn == 0 || p.spawn_capacity == 0 {
            return Self::NONE;
        }
        let base = p.spawn as *mut u8;
        Self {
            header: base as *mut SpawnHeader,
            seqs: unsafe { base.add(spawn::SEQ_OFFSET) } as *mut u32,
            slots: unsafe { base.add(spawn::slots_offset(p.spawn_capacity)) } as *mut Task,
            mask: p.spawn_capacity - 1,
        }
    }

    /// No ring (capacity 0): pushes fail and the ring reads as empty.
    pub const NONE: Self = Self { header: core::ptr::null_mut(), seqs: core::ptr::null_mut(), slots: core::ptr::null_mut(), mask: 0 };

    /// Whether this is [`SpawnRing::NONE`].
    #[inline(always)]
    pub fn is_none(&self) -> bool {
        self.header.is_null()
    }

    /// The sequence word of slot `pos % cap`, made absolute.
    #[inline(always)]
    unsafe fn seq(&self, pos: u32) -> u32 {
        let i = pos & self.mask;
        unsafe { arch::ld_acquire_gpu(self.seqs.add(i as usize)) }.wrapping_add(i)
    }

    #[inline(always)]
    unsafe fn set_seq(&self, pos: u32, value: u32) {
        let i = pos & self.mask;
        unsafe { arch::st_release_gpu(self.seqs.add(i as usize), value.wrapping_sub(i)) };
    }

    /// Pushes `task` (step 1). Lane 0 only. `false` when the ring is full.
    ///
    /// # Safety
    /// The ring must be live.
    #[inline(always)]
    pub unsafe fn try_push(&self, task: &Task) -> bool {
        if self.is_none() {
            return false;
        }
        let enqueue = unsafe { &raw mut (*self.header).enqueue.value };
        let mut pos = unsafe { arch::ld_relaxed_gpu(enqueue) };
        // Lock-free, uncapped: every retry means another warp's push succeeded, and the
        // pushes are finitely many (a full ring ends the loop at once). A cap of 4096
        // attempts made pushes fail under contention (2112 warps growing trees on an
        // H200: tree tests and the record pipeline reported QueueFull, 2026-11-23).
        loop {
            let dif = unsafe { self.seq(pos) }.wrapping_sub(pos) as i32;
            if dif == 0 {
                let old = unsafe { arch::atom_cas_relaxed_gpu(enqueue, pos, pos.wrapping_add(1)) };
                if old == pos {
                    break;
                }
                pos = old;
            } else if dif < 0 {
                // The slot still holds last lap's task: full.
                return false;
            } else {
                pos = unsafe { arch::ld_relaxed_gpu(enqueue) };
            }
        }
        unsafe {
            // Weak stores: published by the release of `seq` below.
            self.slots.add((pos & self.mask) as usize).write(*task);
            self.set_seq(pos, pos.wrapping_add(1));
            // Step 2's count (relaxed: the popper's acquire of `seq` orders the slot).
            arch::atom_add_relaxed_gpu(&raw mut (*self.header).ready.value, 1);
        }
        true
    }

    /// Pushes up to `n` (at most 32) tasks at once, lane `i < n` holding task `i`:
    /// warp-collective (every lane calls with the same `n`). How many were pushed (the
    /// first `k` lanes' tasks), the same in every lane; 0 if the ring has no room.
    ///
    /// Step 1 for a range: every lane of the range loads its slot's sequence word
    /// (`ld.acquire.gpu`); if the first `k` are free for this lap, lane 0 owns positions
    /// `pos..pos + k` with one compare-and-swap on `enqueue` (no other pusher can take
    /// any of them without moving `enqueue` past `pos` first); then each lane stores its
    /// task and releases its word (`st.release.gpu`), as a single push does. Poppers
    /// see each slot alone, unchanged.
    ///
    /// # Safety
    /// The ring must be live.
    #[inline(always)]
    pub unsafe fn try_push_warp(&self, task: &Task, n: u32) -> u32 {
        if self.is_none() || n == 0 {
            return 0;
        }
        let lane = arch::lane_id();
        let enqueue = unsafe { &raw mut (*self.header).enqueue.value };
        let mut pos = arch::shfl_idx(if lane == 0 { unsafe { arch::ld_relaxed_gpu(enqueue) } } else { 0 }, 0);
        let k = loop {
            let mine = pos.wrapping_add(lane);
            let dif = if lane < n { unsafe { self.seq(mine) }.wrapping_sub(mine) as i32 } else { 0 };
            // The free prefix of the range; a slot still holding last lap's task ends it.
            let free = arch::ballot(lane < n && dif == 0);
            let k = (!free).trailing_zeros().min(n);
            if k == 0 && arch::ballot(lane < n && dif < 0) & 1 != 0 {
                return 0;
            }
            if k > 0 {
                let mut won = 0u32;
                if lane == 0 {
                    won = (unsafe { arch::atom_cas_relaxed_gpu(enqueue, pos, pos.wrapping_add(k)) } == pos) as u32;
                }
                if arch::shfl_idx(won, 0) != 0 {
                    break k;
                }
            }
            // Another pusher moved on: from where `enqueue` is now.
            pos = arch::shfl_idx(if lane == 0 { unsafe { arch::ld_relaxed_gpu(enqueue) } } else { 0 }, 0);
        };
        if lane < k {
            let mine = pos.wrapping_add(lane);
            unsafe {
                // Weak stores: published by the release of `seq` below.
                self.slots.add((mine & self.mask) as usize).write(*task);
                self.set_seq(mine, mine.wrapping_add(1));
            }
        }
        // Step 2's count, once for the range (relaxed, as in `try_push`), after every
        // lane's release (the warp barrier).
        arch::syncwarp();
        if lane == 0 {
            unsafe { arch::atom_add_relaxed_gpu(&raw mut (*self.header).ready.value, k) };
        }
        k
    }

    /// Whether a child may be waiting: two independent relaxed loads, the cheap test
    /// a worker makes before each claim. May be stale either way; a pop decides.
    ///
    /// # Safety
    /// The ring must be live (or none).
    #[inline(always)]
    pub unsafe fn maybe_nonempty(&self) -> bool {
        let (e, d) = unsafe { self.counts() };
        Self::differ(e, d)
    }

    /// The two loads of [`SpawnRing::maybe_nonempty`], in every lane (one coalesced
    /// request), for a caller that issues other loads before it looks at them.
    ///
    /// # Safety
    /// The ring must be live (or none).
    #[inline(always)]
    pub unsafe fn counts(&self) -> (u32, u32) {
        if self.is_none() {
            return (0, 0);
        }
        let e = unsafe { arch::ld_relaxed_gpu(&raw const (*self.header).enqueue.value) };
        let d = unsafe { arch::ld_relaxed_gpu(&raw const (*self.header).dequeue.value) };
        (e, d)
    }

    /// Whether more than half the ring is taken (relaxed loads: an estimate). Lane 0
    /// may call it alone.
    ///
    /// # Safety
    /// The ring must be live (or none: then false).
    #[inline(always)]
    pub unsafe fn over_half(&self) -> bool {
        let (e, d) = unsafe { self.counts() };
        e.wrapping_sub(d) > self.mask / 2
    }

    /// Whether [`SpawnRing::counts`] say a child may be waiting; a vote, so the answer
    /// is warp-uniform (the pop that may follow is warp-collective). Every lane must call.
    #[inline(always)]
    pub fn differ(enqueue: u32, dequeue: u32) -> bool {
        arch::ballot(enqueue != dequeue) != 0
    }

    /// Pops one child (step 2): its position, in every lane, or `None` if the ring
    /// looks empty. The slot stays this warp's until [`SpawnRing::release`]: the task
    /// is read in place while it runs. Every lane must call.
    ///
    /// # Safety
    /// The ring must be live.
    #[inline(always)]
    pub unsafe fn try_pop(&self) -> Option<u32> {
        let mut got = 0u32;
        let mut pos = 0u32;
        if arch::lane_id() == 0 {
            let h = self.header;
            let ready = unsafe { &raw mut (*h).ready.value };
            let dequeue = unsafe { &raw mut (*h).dequeue.value };
            // Step 2: take one of `ready`, then claim the next position with an add;
            // no compare-and-swap that the other idle warps make fail (with 2112 warps
            // a spawned tree ran at 0.76 M tasks/s, 2.0 M with 528: H100, session 22).
            loop {
                // Relaxed: counts; the acquire of `seq` below orders the slot.
                if unsafe { arch::ld_relaxed_gpu(ready) } as i32 > 0 {
                    if unsafe { arch::atom_add_relaxed_gpu(ready, u32::MAX) } as i32 > 0 {
                        pos = unsafe { arch::atom_add_relaxed_gpu(dequeue, 1) };
                        got = 1;
                        break;
                    }
                    // Another warp took the last one: give it back.
                    unsafe { arch::atom_add_relaxed_gpu(ready, 1) };
                }
                // None to take: empty, unless a push is claimed and not yet published,
                // or a failed take has not given back yet (both end within a few
                // instructions of another warp): then look again, so that a warp that
                // leaves after popping the ring empty (step 5) leaves none behind.
                let (e, d) = unsafe { self.counts() };
                if e == d {
                    break;
                }
                // The other warp is between two of its instructions: a short pause
                // (on the CPU backend a yield, so that a preempted pusher gets a core).
                arch::nanosleep(32);
            }
            if got != 0 {
                // The position is claimed by a pusher (a take of `ready` follows a
                // claim, and positions are handed out in order): wait for its release
                // of `seq` (it is between its claim and its store).
                while unsafe { self.seq(pos) } != pos.wrapping_add(1) {
                    arch::nanosleep(32);
                }
            }
        }
        if arch::shfl_idx(got, 0) == 0 {
            return None;
        }
        let pos = arch::shfl_idx(pos, 0);
        // Every lane acquires the push's release before reading the slot: the value is
        // `pos + 1` until this warp releases it.
        let _ = unsafe { self.seq(pos) };
        Some(pos)
    }

    /// The task at position `pos`, popped by this warp and not yet released.
    #[inline(always)]
    pub fn slot(&self, pos: u32) -> *const Task {
        self.slots.wrapping_add((pos & self.mask) as usize)
    }

    /// Hands slot `pos` back to the pushers (end of step 2), once every lane is done
    /// with the task. Lane 0 only, after a `bar.warp.sync` that follows the last read.
    ///
    /// # Safety
    /// `pos` must have been popped by this warp and not released.
    #[inline(always)]
    pub unsafe fn release(&self, pos: u32) {
        unsafe { self.set_seq(pos, pos.wrapping_add(self.mask + 1)) };
    }
}
