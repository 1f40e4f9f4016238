//! Device-side follow-up tasks: a running task pushes children into the spawn ring;
//! a worker pops them before it claims its next host task (with the default
//! `worker_flags::SPARSE_LOOK`: after a task that pushed children, after a child, after
//! every 4th queue task; device/src/worker.rs), and while it waits for the host. The
//! layout is `resident_shared::spawn`; docs/protocol.md has the whole.
//!
//! A bounded ring with a sequence word per slot (after D. Vyukov's MPMC queue): slot
//! `i`'s word `seq[i]` (stored as `seq - i`, so zeroed memory is the initial state) is
//! `pos` when the slot is free for the pusher of position `pos`, and `pos + 1` once
//! that pusher published it. Positions are handed out in ranges by atomic adds, never
//! by compare-and-swap: a compare-and-swap that every pusher races for succeeds about
//! once per round trip to L2, whatever the number of warps (a tree grew at 0.6 to 2.6 M
//! tasks a second that way), while an add succeeds for every warp.
//!
//! Orderings (lane 0 does the counters; each lane its own slot):
//! 1. Reserve: lane 0 adds `n` to `used` (relaxed, .gpu); if that passes the capacity
//!    it takes them back and the push fails (full: the caller waits and retries,
//!    `TaskCx::spawn`). `used` counts slots reserved and not yet handed back, so at
//!    most `capacity` positions are ever held at once.
//! 2. Claim: lane 0 adds `n` to `enqueue` (relaxed, .gpu): positions `pos..pos + n`
//!    are this warp's. Each lane `i < n` waits (`ld.acquire.gpu`) until its slot's word
//!    reads `pos + i`: it pairs with the release by which the last lap's popper handed
//!    the slot back (step 5), so that popper's reads of the slot are done. The wait is
//!    bounded: the last lap's position `pos + i - capacity` was popped already (else
//!    `capacity + 1` positions, it and every one up to `pos + i`, would be held at
//!    once, against step 1), and its popper only copies the slot before it hands it
//!    back (it runs no task in between).
//! 3. Publish: each lane stores its task (weak stores), then `st.release.gpu` of its
//!    word, `pos + i + 1`. After a warp barrier, lane 0 adds `n` to `ready` (relaxed;
//!    the popper's acquire of the word orders the slot).
//! 4. Take: lane 0 of a popper loads `ready` (relaxed); if positive, it takes
//!    `want = clamp(ready / 64, 1, POP_BATCH)` of it with an add of `-want`, keeps
//!    `min(want, before)` (none if `before <= 0`) and gives the rest back with an add.
//!    Takes never outnumber the publications counted (each take is bounded by what the
//!    add found, which already net of every earlier take's whole `want`). Then it adds
//!    what it kept to `dequeue`: positions are handed out in order, after as many
//!    publications were counted, so each is claimed by a pusher that will publish it.
//!    A draining pop (a warp about to leave, or one that just pushed) that takes
//!    nothing reports empty only if `enqueue == dequeue` (else a push between its
//!    claim and its count, or a take being given back, is under way: it looks again);
//!    any other reports empty at once (it looks again soon: `crate::worker`).
//! 5. Copy and hand back: the popper's lanes wait (`ld.acquire.gpu`) until each taken
//!    slot's word reads `pos + 1` (pairs with step 3's release), copy the tasks into the
//!    warp's own batch area (`resident_shared::spawn::batches_offset`), and after a
//!    warp barrier hand each slot back with `st.release.gpu` of `pos + capacity`; then
//!    lane 0 subtracts the count from `used`. The warp runs the copies one after
//!    another, from its batch area, and pops again only after the last.
//! 6. Exactly once: a push position is owned by the one add on `enqueue` that moved
//!    past it, a pop position by the one add on `dequeue` that moved past it, and a
//!    slot's word admits one pusher then one popper per lap.
//! 7. Completion: before a push, the parent's lane 0 adds `-n` to its segment's
//!    `pending` (`crate::completion`), then a warp barrier; each child's word is
//!    released after it, so the popper that acquires the word, and the child's own
//!    completion add after it, come after the parent's add. The parent's own `+1`
//!    comes later in its program order, so the segment cannot complete before every
//!    child is counted.
//! 8. Shutdown: a worker leaves only after popping the ring empty and running its
//!    batch. A push by a warp that is still running is drained by that warp before it
//!    leaves.

use resident_shared::spawn::{self, POP_BATCH, SpawnHeader};
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

/// A lane's share of one task in a copy: 16 bytes, so four lanes copy a task and a warp
/// copies [`POP_BATCH`] at once.
const LANES_PER_TASK: u32 = 4;
const _: () = assert!(POP_BATCH * LANES_PER_TASK == 32 && core::mem::size_of::<Task>() == 16 * LANES_PER_TASK as usize);

impl SpawnRing {
    /// # Safety
    /// `p.spawn` must hold a zeroed (or live) ring of `p.spawn_capacity` slots, a power
    /// of two, with batch areas for `p.workers` warps, or be null with capacity 0.
    pub unsafe fn new(p: &KernelParams) -> Self {
        if p.spawn == 0 || p.spawn_capacity == 0 {
            return Self::NONE;
        }
        let base = p.spawn as *mut u8;
        Self {
            header: base as *mut SpawnHeader,
            seqs: base.wrapping_add(spawn::SEQ_OFFSET) as *mut u32,
            slots: base.wrapping_add(spawn::slots_offset(p.spawn_capacity)) as *mut Task,
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

    /// Slots in the ring (0 for none).
    #[inline(always)]
    pub fn capacity(&self) -> u32 {
        if self.is_none() { 0 } else { self.mask + 1 }
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

    /// Pushes `n` (1 to [`arch::WARP`]) tasks at once, lane `i < n` holding task `i`:
    /// warp-collective (every lane calls with the same `n`). All of them (`n`, in every lane) or none
    /// (0: the ring has no room for `n` more).
    ///
    /// # Safety
    /// The ring must be live.
    #[inline(always)]
    pub unsafe fn try_push_warp(&self, task: &Task, n: u32) -> u32 {
        if self.is_none() || n == 0 || n > arch::WARP {
            return 0;
        }
        let lane = arch::lane_id();
        let h = self.header;
        let (mut ok, mut pos) = (0u32, 0u32);
        if lane == 0 {
            // SAFETY: the header of the live ring (the caller's contract).
            unsafe {
                // Step 1 (relaxed: a count; the slots are ordered by their words).
                let used = &raw mut (*h).used.value;
                let before = arch::atom_add_relaxed_gpu(used, n);
                if before.saturating_add(n) <= self.mask + 1 {
                    // Step 2's claim.
                    pos = arch::atom_add_relaxed_gpu(&raw mut (*h).enqueue.value, n);
                    ok = 1;
                } else {
                    arch::atom_add_relaxed_gpu(used, n.wrapping_neg());
                }
            }
        }
        if arch::shfl_idx(ok, 0) == 0 {
            return 0;
        }
        let pos = arch::shfl_idx(pos, 0);
        // Lane 0's adds before every lane's wait and release (memory order, not only
        // the data dependency of the shuffle).
        arch::syncwarp();
        if lane < n {
            let mine = pos.wrapping_add(lane);
            // SAFETY: position `mine` is this lane's (the claim above), its slot index
            // masked into the ring; the slot is written only once its word says free.
            unsafe {
                // Step 2's wait: bounded (see the module's notes).
                while self.seq(mine) != mine {
                    arch::nanosleep(32);
                }
                // Step 3: weak stores, published by the release of the word.
                self.slots.add((mine & self.mask) as usize).write(*task);
                self.set_seq(mine, mine.wrapping_add(1));
            }
        }
        // Step 3's count, once for the range, after every lane's release.
        arch::syncwarp();
        if lane == 0 {
            // SAFETY: the live ring's header.
            unsafe { arch::atom_add_relaxed_gpu(&raw mut (*h).ready.value, n) };
        }
        n
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
    #[cfg(target_arch = "nvptx64")]
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

    /// Pops up to [`POP_BATCH`] children (steps 4-5) into this warp's batch area: how
    /// many, in every lane (0 if none was ready to take; with `drain`, only once the
    /// ring is empty). Their slots are handed back
    /// before it returns; the tasks stay in the batch area ([`SpawnRing::batched`])
    /// until the next pop. Every lane must call.
    ///
    /// # Safety
    /// The ring must be live, the caller one of its grid's `workers` warps (it owns the
    /// batch area of its warp number); no task of the last batch may still be running.
    #[inline(always)]
    pub unsafe fn try_pop(&self, drain: bool) -> u32 {
        if self.is_none() {
            return 0;
        }
        let lane = arch::lane_id();
        let h = self.header;
        let (mut took, mut pos) = (0u32, 0u32);
        // SAFETY (every block below): the header, words and slots of the live ring (the
        // caller's contract), slot indices masked into it; positions `pos..pos + took`
        // are this warp's (its add on `dequeue`), read only once published (step 5), and
        // the batch area is this warp's own (its warp number, below `workers`).
        if lane == 0 {
            let ready = unsafe { &raw mut (*h).ready.value };
            loop {
                // Step 4 (relaxed: counts; the words order the slots).
                let r = unsafe { arch::ld_relaxed_gpu(ready) } as i32;
                if r > 0 {
                    let want = (r as u32 / 64).clamp(1, POP_BATCH);
                    let before = unsafe { arch::atom_add_relaxed_gpu(ready, want.wrapping_neg()) } as i32;
                    took = before.clamp(0, want as i32) as u32;
                    if took < want {
                        // Others took the rest meanwhile: give it back.
                        unsafe { arch::atom_add_relaxed_gpu(ready, want - took) };
                    }
                    if took > 0 {
                        pos = unsafe { arch::atom_add_relaxed_gpu(&raw mut (*h).dequeue.value, took) };
                        break;
                    }
                }
                // None to take: empty, unless a push is claimed and not yet counted, or
                // a take is being given back (both end within a few instructions of
                // another warp, or a popper's copy). A warp about to leave, or one that
                // just pushed (`drain`), looks again then, so that it leaves none
                // behind (step 8) and its children are taken before it claims a queue
                // task; any other goes on (it looks again soon: `crate::worker`),
                // rather than spin on the lines every pusher and popper updates.
                let (e, d) = unsafe { self.counts() };
                if e == d || !drain {
                    break;
                }
                // On the CPU backend a yield, so that a preempted pusher gets a core.
                arch::nanosleep(32);
            }
        }
        let took = arch::shfl_idx(took, 0);
        if took == 0 {
            return 0;
        }
        let pos = arch::shfl_idx(pos, 0);
        if arch::WARP == 1 {
            // The CPU backend's one lane copies every task.
            for i in 0..took {
                unsafe { self.copy_in(pos.wrapping_add(i), i, 0, LANES_PER_TASK) };
            }
        } else {
            let i = lane / LANES_PER_TASK;
            if i < took {
                unsafe { self.copy_in(pos.wrapping_add(i), i, lane % LANES_PER_TASK, 1) };
            }
        }
        // Step 5: every lane's reads of the slots before their hand-back.
        arch::syncwarp();
        if arch::WARP == 1 || lane.is_multiple_of(LANES_PER_TASK) {
            let (first, last) = if arch::WARP == 1 { (0, took) } else { (lane / LANES_PER_TASK, lane / LANES_PER_TASK + 1) };
            for i in first..last.min(took) {
                let mine = pos.wrapping_add(i);
                unsafe { self.set_seq(mine, mine.wrapping_add(self.mask + 1)) };
            }
        }
        arch::syncwarp();
        if lane == 0 {
            unsafe { arch::atom_add_relaxed_gpu(&raw mut (*h).used.value, took.wrapping_neg()) };
        }
        took
    }

    /// Step 5 for one lane: waits for position `pos` to be published, then copies
    /// `parts` 16-byte parts of its task from part `part` on into batch entry `i`.
    ///
    /// # Safety
    /// `pos` must be a position this warp took; `i < POP_BATCH`.
    #[inline(always)]
    unsafe fn copy_in(&self, pos: u32, i: u32, part: u32, parts: u32) {
        unsafe {
            while self.seq(pos) != pos.wrapping_add(1) {
                arch::nanosleep(32);
            }
            let from = self.slots.add((pos & self.mask) as usize) as *const u64;
            let to = self.batched(i) as *mut u64;
            for q in part..part + parts {
                // Weak loads after the acquire of the word; volatile stores, so that the
                // copy is made here, before the hand-back.
                let (a, b) = arch::ld_weak_v2_u64(from.add(2 * q as usize));
                core::ptr::write_volatile(to.add(2 * q as usize), a);
                core::ptr::write_volatile(to.add(2 * q as usize + 1), b);
            }
        }
    }

    /// Entry `i` of this warp's batch area: a task popped by the last
    /// [`SpawnRing::try_pop`] (`i` below what it returned). Entry [`POP_BATCH`] is the
    /// warp's `PendingCount` (`crate::completion`, step 4'). The areas follow the slots,
    /// one per worker warp in warp order (`resident_shared::spawn::batches_offset`):
    /// found from the warp's number, not held in a register across the loop.
    #[inline(always)]
    pub fn batched(&self, i: u32) -> *const Task {
        self.area().wrapping_add(i as usize)
    }

    #[inline(always)]
    fn area(&self) -> *mut Task {
        let entry = self.mask as usize + 1 + arch::global_warp_id() as usize * (POP_BATCH as usize + 1);
        self.slots.wrapping_add(entry)
    }
}
