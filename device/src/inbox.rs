//! The receiving side of peer links: another device's tasks push into inboxes in this
//! device's memory (`crate::link`, through peer access), and the inbox warp (the relay
//! kernel's second warp, [`inbox_loop`]), the one popper of every inbox, moves what
//! they pushed into the spawn ring, where the workers run it as they run children.
//! A warp of its own, because with the relay warp draining the inboxes between its polls
//! of the host's mailbox, a traced peer follow-up took about 6 µs from a push's
//! publication to its move (2 x H200). The layouts are `resident_shared::link` (the
//! inbound table in the buffer-table allocation, [`InboxHeader`], sequence words, slots).
//!
//! Orderings (the inbox warp's lanes move up to 32 tasks at a time, one each):
//! I1. The inbound entry: relaxed `.sys` loads (the host writes it with a synchronous
//!     copy, after the inbox was zeroed, and clears `live` at a close). An entry read
//!     torn is either not live or names the right inbox: the address is written before
//!     `live`, and only cleared (a link that failed to be made) with `live` zero.
//! I2. Pop: `ld.acquire.sys` of the slot's sequence word seeing `pos + 1` pairs with the
//!     pusher's `st.release.sys` (another device's warp, `crate::link` L4): the task's
//!     bytes are visible. Lane 0 makes its own acquire before it reads the slot.
//! I3. Hand back: the inbox warp moves up to 32 tasks at a time, one per lane (each lane
//!     acquires its own slot's word, I2, and reads its slot), pushes them into the
//!     spawn ring together (`SpawnRing::try_push_warp`), then every lane fences
//!     (`fence.acq_rel.sys`) and stores its word `pos + capacity` relaxed at `.sys` (a
//!     release pattern), which the pusher of the next lap acquires (L3) before it
//!     overwrites the slot. One lane doing it all, a `st.release.sys` per slot, held
//!     the relay to 0.27 M pushes a second (2 x H200, 2026-11-26): each task was a
//!     chain of dependent loads, atomics and system fences. `dequeue` is the inbox warp's
//!     own (relaxed; in device memory so that it survives a relaunch).
//! I4. The copy is a `CHILD | PEER` task whose `seg`/`wait_value` name the inbox's
//!     `done` word, with no counters (a pusher's task set is this one's, but its
//!     counters are not): the worker that runs it adds 1 to `failed` (relaxed) if it
//!     failed, then 1 to `done` with a release add (`crate::completion`). A peer task
//!     belongs to no segment and may neither push children nor push through links.
//! I5. The host's copy: on polls, the lane of each live inbox loads `done`
//!     (`ld.acquire.sys`: after the completions' release adds it counts) then `failed`;
//!     if `done` changed, it stores `failed` (relaxed, .sys) then `done` (`st.release.sys`)
//!     into the inbox's mirror in mapped pinned memory; the host's `Acquire` load of
//!     `done` pairs with it, then it reads `failed` (`Link` flush and counts). One writer
//!     per mirror, so the host never sees it go backwards.
//! The inbox warp drains only while the mailbox's `peers` word says peer links into the
//! runtime are open; it looks at the inboxes continuously then (sleeping at most 256 ns
//! between looks that found nothing), and at `peers` every 10 µs or so while none is.
//! It moves nothing while the spawn ring is more than half full (the runtime's own
//! children keep room).
//! Exactly once: each position is moved once (one popper, in order; a full spawn ring
//! leaves it for the next poll), and the spawn ring's own protocol runs each copy once.

use resident_shared::link::{INBOUND_OFFSET, INBOX_SEQ_OFFSET, InboxHeader, MAX_INBOUND, inbox_slots_offset};
use resident_shared::relay::RelayMailbox;
use resident_shared::{KernelParams, QueueHeader, Task, task_flags};

use crate::arch;
use crate::spawn::SpawnRing;

/// Tasks moved from one inbox per call, at most: the inbox warp looks at the others and
/// at its exit conditions in between.
const MOVE_MAX: u32 = 128;

/// Longest sleep of the inbox warp between looks while peer links are open, and while
/// none is (then it only reads the mailbox's `peers` word, over PCIe).
const OPEN_SLEEP_NS: u32 = 256;
const CLOSED_SLEEP_NS: u32 = 10_000;

/// The inbox warp (the relay kernel's second warp): drains the inboxes while peer links
/// into this runtime are open, and leaves when the relay does: on the header's `abort`
/// (which the relay sets when the host asks for an abort through the mailbox), or once
/// the sentinel has passed and every worker has left. Every lane calls. At the
/// runtime's shutdown a drain can race the last worker's exit: tasks it moved then are
/// never run, and the pusher's flush reports them as `ShutDown` (a peer link holds its
/// receiver resident, so only a closing receiver meets this).
///
/// # Safety
/// As for [`drain`]; `p.header` and `p.relay` must be the live queue header and relay
/// mailbox.
pub unsafe fn inbox_loop(p: &KernelParams) {
    let spawn = unsafe { SpawnRing::new(p) };
    let mailbox = p.relay as *const RelayMailbox;
    let header = p.header as *const QueueHeader;
    let mut peers = false;
    let mut looks = 0u32;
    let mut sleep = 0u32;
    loop {
        // The mailbox's `peers` (host memory): relaxed, a hint nothing is read through
        // (I1 orders the inbound entries). At every look while no link is open (each
        // after a sleep of up to 10 µs), every 64th while one is.
        if !peers || looks.is_multiple_of(64) {
            peers = unsafe { arch::ld_relaxed_sys_u64(&raw const (*mailbox).peers) } != 0;
        }
        looks = looks.wrapping_add(1);
        // The relay's exit conditions, read as the relay reads them; checked before the
        // inboxes, so a steady stream of pushes cannot keep this warp from leaving.
        // Relaxed (both): this warp only leaves on them, reading nothing through them;
        // an acquire load would invalidate its SM's L1 at every pass.
        if unsafe { arch::ld_relaxed_sys(&raw const (*header).abort.value) } != 0 {
            return;
        }
        if unsafe { arch::ld_relaxed_gpu(&raw const (*header).stop.value) } != 0
            && unsafe { arch::ld_relaxed_gpu(&raw const (*header).exited.value) } >= p.workers
        {
            return;
        }
        if peers && unsafe { drain(p, &spawn) } {
            sleep = 0;
            continue;
        }
        arch::nanosleep(sleep);
        sleep = (sleep * 2).clamp(32, if peers { OPEN_SLEEP_NS } else { CLOSED_SLEEP_NS });
    }
}

/// Moves what peer links pushed into this runtime's inboxes into the spawn ring. Every
/// lane of the inbox warp calls; true if anything moved.
///
/// # Safety
/// `p.buffers` must be the runtime's table allocation
/// (`resident_shared::link::TABLES_BYTES` bytes); the inboxes its inbound entries name
/// must be live (they live as long as the pushing runtime's backend and this one's).
#[inline(never)]
pub unsafe fn drain(p: &KernelParams, spawn: &SpawnRing) -> bool {
    if spawn.is_none() || p.buffers == 0 {
        return false;
    }
    let lane = arch::lane_id();
    // I1: one entry per lane (16 bytes each, one coalesced request).
    let table = unsafe { (p.buffers as *const u8).add(INBOUND_OFFSET) } as *const u64;
    let (inbox, word) = if (lane as usize) < MAX_INBOUND {
        unsafe { (arch::ld_relaxed_sys_u64(table.add(2 * lane as usize)), arch::ld_relaxed_sys_u64(table.add(2 * lane as usize + 1))) }
    } else {
        (0, 0)
    };
    let mask = word as u32;
    let mut ready = false;
    if inbox != 0 && (word >> 32) != 0 {
        let h = inbox as *mut InboxHeader;
        // I5.
        unsafe {
            let done = arch::ld_acquire_sys_u64(&raw const (*h).done);
            let failed = arch::ld_relaxed_gpu_u64(&raw const (*h).failed);
            let mirror = arch::ld_relaxed_gpu_u64(&raw const (*h).mirror) as *mut u64;
            if !mirror.is_null() && done != arch::ld_relaxed_gpu_u64(&raw const (*h).published) {
                arch::st_relaxed_sys_u64(mirror.add(1), failed);
                arch::st_release_sys_u64(mirror, done);
                arch::st_relaxed_gpu_u64(&raw mut (*h).published, done);
            }
        }
        let pos = unsafe { arch::ld_relaxed_gpu(&raw const (*h).dequeue) };
        let i = pos & mask;
        let seqs = unsafe { (inbox as *const u8).add(INBOX_SEQ_OFFSET) } as *const u32;
        // I2 (a look; `move_from` acquires again in each lane before it reads).
        ready = unsafe { arch::ld_acquire_sys(seqs.add(i as usize)) }.wrapping_add(i) == pos.wrapping_add(1);
    }
    let mut todo = arch::ballot(ready);
    let mut moved = false;
    while todo != 0 {
        let k = todo.trailing_zeros();
        todo &= todo - 1;
        let base = (arch::shfl_idx(inbox as u32, k) as u64) | (arch::shfl_idx((inbox >> 32) as u32, k) as u64) << 32;
        let mask = arch::shfl_idx(mask, k);
        // SAFETY: a live inbox (the caller's contract) of `mask + 1` slots.
        if unsafe { move_from(base, mask, spawn) } != 0 {
            moved = true;
        }
    }
    moved
}

/// Moves up to [`MOVE_MAX`] tasks from the inbox at `base` into the spawn ring, up to
/// 32 at a time, one per lane (I2-I4); how many. Every lane calls.
#[inline(always)]
unsafe fn move_from(base: u64, mask: u32, spawn: &SpawnRing) -> u32 {
    let lane = arch::lane_id();
    let h = base as *mut InboxHeader;
    let inbox = base as *mut u8;
    let seqs = unsafe { inbox.add(INBOX_SEQ_OFFSET) } as *mut u32;
    let slots = unsafe { inbox.add(inbox_slots_offset(mask.wrapping_add(1))) } as *const Task;
    let done = unsafe { &raw mut (*h).done } as u64;
    // The inbox warp's own word, stored by lane 0: lane 0's load, broadcast (another lane's
    // load is not ordered after lane 0's earlier store, and could see an older value).
    let mut pos = arch::shfl_idx(if lane == 0 { unsafe { arch::ld_relaxed_gpu(&raw const (*h).dequeue) } } else { 0 }, 0);
    let mut n = 0;
    // The runtime's own children keep half the spawn ring (lane 0's look decides).
    while n < MOVE_MAX && arch::shfl_idx(unsafe { spawn.over_half() } as u32, 0) == 0 {
        let mine = pos.wrapping_add(lane);
        let i = mine & mask;
        // I2, by every lane for its own slot (its acquire orders its read of the slot).
        let ready = lane <= mask && unsafe { arch::ld_acquire_sys(seqs.add(i as usize)) }.wrapping_add(i) == mine.wrapping_add(1);
        let r = (!arch::ballot(ready)).trailing_zeros();
        if r == 0 {
            break;
        }
        let mut t = if lane < r { unsafe { slots.add(i as usize).read() } } else { Task::raw(0, [0; resident_shared::TASK_ARGS]) };
        // I4.
        t.flags = task_flags::CHILD | task_flags::PEER;
        t.seg = done as u32;
        t.wait_value = (done >> 32) as u32;
        t.wait_counter = 0;
        t.signal_counter = 0;
        // SAFETY: the relay's ring (live while the relay runs).
        let k = unsafe { spawn.try_push_warp(&t, r) };
        if k == 0 {
            // Full: these positions wait for a later poll.
            break;
        }
        // I3: the copies are in the spawn ring; every lane's slot read before its word.
        arch::fence_acq_rel_sys();
        if lane < k {
            unsafe { arch::st_relaxed_sys(seqs.add(i as usize), mine.wrapping_add(mask).wrapping_add(1).wrapping_sub(i)) };
        }
        pos = pos.wrapping_add(k);
        n += k;
    }
    if n > 0 && lane == 0 {
        unsafe { arch::st_relaxed_gpu(&raw mut (*h).dequeue, pos) };
    }
    n
}
