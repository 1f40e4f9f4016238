//! The relay: one warp (kernel `resident_relay`, beside the persistent kernel) that moves
//! small host batches into the ring without a driver call on the host. The host writes
//! each task inline into the mailbox's slots (`resident_shared::relay`: every 8-byte
//! word carries its task's stamp); the relay reads a slot's 16 words in one parallel
//! read, and when every stamp is right, stores the task into the ring and publishes
//! `tail` for the workers. Large batches (and resident lists) are committed as list runs
//! that the relay passes on (step 7; the workers read those tasks in place), or, with
//! `RuntimeConfig::relay_publish` off, go by copy on the transfer stream; the host
//! never lets the copies and the relay overlap (`host/backend/cuda/relay.rs`).
//!
//! Orderings:
//! 1. Host: plain 8-byte stores of the slot's words, in any order (each is single-copy
//!    atomic), after it saw `mailbox.relayed` past the slot's previous task (step 4).
//! 2. Relay, every lane: `ld.relaxed.sys.u64` of one word of each of the next
//!    [`SLOTS_PER_POLL`] slots. No acquire is needed: a word is valid by its own stamp,
//!    and nothing else of the host's is read. A slot counts once all 16 of its words
//!    carry its stamp; slots are taken in order, up to the first incomplete one. A
//!    poll that finds all of its slots ready publishes them (step 3), then reads the
//!    next [`BURST_SLOTS`] the same way at once, and publishes what of them is ready:
//!    a batch of 32 in two round trips over PCIe, not eight.
//! 3. Relay: weak stores of the payload words into the ring; `bar.warp.sync` (the
//!    lanes' stores happen before lane 0's next operations); lane 0 stores `tail` with
//!    `st.release.gpu`, which the workers' `ld.acquire.sys` of `tail` pairs with
//!    (`crate::queue`, step 2): release is cumulative, so they see every lane's stores.
//! 4. When a poll finds nothing new, lane 0 stores `mailbox.relayed = next` with
//!    `st.release.sys`: the host's acquire load of it then sees the relay's reads of
//!    every slot before `next` done (slot reuse) and its `tail` stores done (a copy may
//!    publish `tail` next). Echoing only when idle keeps the system-scope release
//!    (a `MEMBAR.SYS`) off the path of a batch: it is paid after publication.
//! 5. Copy publications move `tail` past the relay's `next`: the relay reads `tail`
//!    (relaxed, .gpu: only a position, no data is read through it) on every poll and
//!    continues from there. The host writes inline slots again only after the copies,
//!    `tail` included, have landed.
//! 3b. Express tasks (`task_flags::EXPRESS`: a lone leaf task whose ticket resolves from
//!    its own completion record): when a poll finds exactly one ready slot and it is
//!    such a task, short, with no dependency, the relay runs it itself, before step 3:
//!    `fence.acq_rel.sys` (with the relaxed loads of the slot, an acquire pattern that
//!    pairs with the host's writes of the buffers before the slot), the task, a
//!    warp barrier, lane 0 signals its counter (`atom.acq_rel.gpu`) and writes its
//!    record with `fence.acq_rel.sys` + `st.relaxed.sys` of the stamp, which the host's
//!    acquire of the stamp pairs with. Then step 3 stores the slot with
//!    `task_flags::RELAYED` set, and the worker that claims it only counts it in its
//!    segment (so the slot is reused only after a worker has read it). This saves the
//!    hop to a worker (a `tail` store, a poll, the slot read) on the latency path.
//!    Record before publication: the segment's record, which follows the worker's
//!    acquire of `tail`, never reaches the host before the task's own.
//! 7. Runs: a large batch is written by the host in place into the host ring (mapped
//!    pinned memory), and a resident list lies in device memory; either is committed
//!    as list runs (`crate::lists`): the host writes each run's entry into the
//!    mailbox's copy of the table, its `span` last, with release. The relay polls the
//!    `span` words of the entries of the next few runs with the slots, and copies the runs
//!    that start at `next` into the device's table and publishes `tail` over them
//!    ([`take_runs`] has the orderings): one round trip over PCIe from the host's
//!    commit to the relay's publication. The workers then read the tasks in place,
//!    over PCIe from the host ring (a run staged as 32-byte `CompactTask`s has
//!    `COMPACT_RUN` in its `span` too: the relay sets `lists::COMPACT` in the address
//!    it computes, and the workers widen each task, device/src/worker.rs). No copy
//!    engine and no driver call on the way
//!    (`RuntimeConfig::relay_publish`); the relay is then the only writer of `tail`.
//! 6. The relay leaves on abort, or once the terminate sentinel has run (`stop`) and
//!    every worker has left the loop (`exited` reaches `KernelParams::workers`). The
//!    host asks for an abort in the mailbox too (`abort`, read relaxed with each poll:
//!    nothing is read through it); the relay stores it into the header's `abort`
//!    (`st.release.gpu`), which the workers poll.

use resident_shared::lists::{COMPACT, IN_HOST, LIST_RUNS, ListRun};
use resident_shared::relay::{COMPACT_RUN, LL_SLOTS, LL_WORDS, RING_RUN, RUN_FLAGS, RelayMailbox, SLICE_GAP_NS, ll_stamp};
use resident_shared::{BufferEntry, CompactTask, KernelParams, QueueHeader, Task, task_flags};

use crate::arch;
use crate::completion::Completer;
use crate::spawn::SpawnRing;
use crate::task::{TaskCx, TaskSet};

/// Longest sleep between two polls of the mailbox. A poll is a read over PCIe (about
/// a microsecond each way), so the sleep adds little to the latency.
const MAX_SLEEP_NS: u32 = 128;

/// Slots read per poll: every lane reads one word of each of `SLOTS_PER_POLL / 2` pairs
/// of slots, all loads in flight at once.
const SLOTS_PER_POLL: u32 = 4;
const LANES_PER_SLOT: u32 = LL_WORDS as u32;
const ROUNDS: u32 = SLOTS_PER_POLL * LANES_PER_SLOT / arch::WARP;
/// Slots read at once after a poll found all of its [`SLOTS_PER_POLL`] ready: the rest of
/// a batch longer than a poll in one more round trip over PCIe (a batch of 32 took 8
/// polls, 22 µs submit to done, against 12 µs for 264 tasks by copy; H200,
/// 2026-11-29), without reading 4 KiB over PCIe in every idle poll.
const BURST_SLOTS: u32 = 28;
const BURST_ROUNDS: u32 = BURST_SLOTS * LANES_PER_SLOT / arch::WARP;

/// Runs the relay on the calling warp until shutdown.
///
/// # Safety
/// `p` must describe a live queue whose `relay` is a mapped [`RelayMailbox`].
#[inline(always)]
pub unsafe fn relay_loop<S: TaskSet>(p: &KernelParams) {
    let mailbox = p.relay as *mut RelayMailbox;
    let header = p.header as *mut QueueHeader;
    let ring = p.ring as *mut u32;
    let mask = p.capacity - 1;
    let lane = arch::lane_id();
    let done = unsafe { Completer::new(p) };
    // Next sequence number to relay (64-bit, like the host's), and the runs published
    // so far: the next one is in entry `runs_taken % LIST_RUNS` (the host gives runs
    // their entries in sequence order, the order they are published in). Zero at the
    // first launch; after an idle exit, where the relay left off (the host writes both
    // before the launch, which orders them before these reads: relaxed loads).
    let mut next = unsafe { arch::ld_relaxed_sys_u64(&raw const (*mailbox).resume_next) };
    let mut runs_taken = unsafe { arch::ld_relaxed_sys_u64(&raw const (*mailbox).resume_runs) } as u32;
    // Where the host ring lies (written before the launch; step 7).
    let host_ring = unsafe { arch::ld_relaxed_sys_u64(&raw const (*mailbox).host_ring) };
    let mut polls = 0u32;
    let mut echoed = true;
    let mut sleep = 0u32;
    // Time slices taken by other contexts (`RelayMailbox::slices`): the relay reads its
    // clock every 16th poll, and lane 0 counts the gaps; the count goes on from where
    // the last launch left it (its stores landed before that kernel ended, which the
    // host waited for before this launch).
    let mut slices = unsafe { arch::ld_relaxed_sys_u64(&raw const (*mailbox).slices) };
    let mut last_poll = arch::globaltimer();
    loop {
        polls = polls.wrapping_add(1);
        if polls % 16 == 0 {
            // Time slices other contexts took: a gap in the relay's clock over 16 polls
            // (a few tens of microseconds) longer than `SLICE_GAP_NS`. Every 16th poll
            // only: a read of %globaltimer in every poll measured 0.2-0.6 us slower on
            // the one-task round trip (H100, 2026-11-26).
            let now = arch::globaltimer();
            let gap = now.wrapping_sub(last_poll);
            last_poll = now;
            if gap > SLICE_GAP_NS && lane == 0 {
                // Relaxed, .sys: a hint for the host's residency policy; nothing is
                // read through either word (the host may see the count before the
                // length: it uses the length for its report only).
                slices += 1;
                unsafe { arch::st_relaxed_sys_u64(&raw mut (*mailbox).slice_ns, gap) };
                unsafe { arch::st_relaxed_sys_u64(&raw mut (*mailbox).slices, slices) };
            }
        }
        // Step 2: all loads first (one PCIe round trip), then the stamps.
        let words: [u64; ROUNDS as usize] = unsafe { read_slots(mailbox, next) };
        // Step 5 (read beside the slots, used after), and the host's abort (step 6),
        // whose load is in flight with the slots'.
        let tail = unsafe { arch::ld_relaxed_gpu(&raw const (*header).tail.value) };
        let abort_asked = unsafe { arch::ld_relaxed_sys_u64(&raw const (*mailbox).abort) };
        // Step 7: this lane's entry of the host's table of runs, in flight with the
        // rest (relaxed: a fence completes the acquire pattern when a run is taken).
        let span = if lane < RUNS_PER_POLL {
            unsafe { arch::ld_relaxed_sys_u64(&raw const (*mailbox).runs[run_entry(runs_taken, lane)].span) }
        } else {
            0
        };
        let ready = ready_slots(&words, next);
        if ready > 0 {
            // Step 3b: a lone express task runs here, before it is published.
            let mut lead = words[0] as u32;
            if ready == 1 {
                let task = gather(words[0] as u32);
                if let Some(reads) = may_run::<S>(&task) {
                    unsafe { run::<S>(p, &done, &task, next as u32, reads) };
                    // The task's own time is no gap between polls.
                    last_poll = arch::globaltimer();
                    // Lane 0 holds word 0 (opcode, flags).
                    lead |= (task_flags::RELAYED as u32) << 16;
                }
            }
            // Step 3.
            unsafe { store_slots(ring, mask, &words, ready, next, lead) };
            next += ready as u64;
            if lane == 0 {
                unsafe { arch::st_release_gpu(&raw mut (*header).tail.value, next as u32) };
            }
            if ready == SLOTS_PER_POLL {
                // The batch may go on: its next slots in one read (steps 2 and 3 again).
                let burst: [u64; BURST_ROUNDS as usize] = unsafe { read_slots(mailbox, next) };
                let more = ready_slots(&burst, next);
                if more > 0 {
                    unsafe { store_slots(ring, mask, &burst, more, next, burst[0] as u32) };
                    next += more as u64;
                    if lane == 0 {
                        unsafe { arch::st_release_gpu(&raw mut (*header).tail.value, next as u32) };
                    }
                }
            }
            echoed = false;
            sleep = 0;
            continue;
        }
        // Step 7: runs committed into the host's table.
        if unsafe { take_runs(p, mailbox, host_ring, &mut next, &mut runs_taken, span) } {
            echoed = false;
            sleep = 0;
            continue;
        }
        // Step 5: copies published past `next`.
        let ahead = tail.wrapping_sub(next as u32) as i32;
        if ahead > 0 {
            next += ahead as u64;
            echoed = false;
            continue;
        }
        if !echoed {
            // Step 4.
            if lane == 0 {
                unsafe { arch::st_release_sys_u64(&raw mut (*mailbox).relayed, next) };
            }
            echoed = true;
        }
        // Step 6. The host's abort word in the mailbox goes on to the workers, through
        // the header's `abort`, which they poll.
        if abort_asked != 0 {
            // Release, .gpu: the workers read `abort` relaxed (full polls,
            // `crate::queue`); nothing is read through it.
            if lane == 0 {
                unsafe { arch::st_release_gpu(&raw mut (*header).abort.value, 1) };
            }
            return;
        }
        // Relaxed (both): this warp only leaves on them, reading nothing through them;
        // an acquire load would invalidate its SM's L1 at every pass.
        if unsafe { arch::ld_relaxed_sys(&raw const (*header).abort.value) } != 0 {
            return;
        }
        // After the sentinel, stay (polling the mailbox for an abort) until every
        // worker has left: a task may still run, and under compute-sanitizer the
        // mailbox is the only way an abort reached it (the host's memset did not land
        // while the resident kernels ran). Relaxed: only a count, nothing is read
        // through it.
        if unsafe { arch::ld_relaxed_gpu(&raw const (*header).stop.value) } != 0
            && unsafe { arch::ld_relaxed_gpu(&raw const (*header).exited.value) } >= p.workers
        {
            return;
        }
        arch::nanosleep(sleep);
        sleep = (sleep * 2).clamp(32, MAX_SLEEP_NS);
    }
}

/// Step 2: lane `l`'s words of the `R * 32 / 16` slots from sequence number `next` on,
/// word `k % 16` of slot `k / 16` for `k = r * 32 + l` (two slots a round), all loads
/// issued before any is used: one PCIe round trip. Relaxed, .sys: a word is valid by
/// its own stamp.
///
/// # Safety
/// `mailbox` the live, mapped mailbox. Every lane must call.
#[inline(always)]
unsafe fn read_slots<const R: usize>(mailbox: *const RelayMailbox, next: u64) -> [u64; R] {
    let lane = arch::lane_id();
    let mut words = [0u64; R];
    for (r, w) in words.iter_mut().enumerate() {
        let k = r as u32 * arch::WARP + lane;
        let seq = next + (k / LANES_PER_SLOT) as u64;
        // SAFETY: a slot of the live mailbox (the caller's contract), its index taken
        // modulo the slot count; a word within it (`k % 16`). Relaxed, .sys: the word's
        // stamp, checked by `ready_slots`, says whether the host's 8-byte store of it
        // (single-copy atomic) has landed; nothing else is read through it.
        let slot = unsafe { &raw const (*mailbox).slots[(seq % LL_SLOTS as u64) as usize] };
        *w = unsafe { arch::ld_relaxed_sys_u64(&raw const (*slot).words[(k % LANES_PER_SLOT) as usize]) };
    }
    words
}

/// How many slots from `next` on are complete, in order: every one of a slot's 16
/// words carries its stamp, up to the first slot that does not. The same in every lane
/// (votes). Every lane must call.
#[inline(always)]
fn ready_slots<const R: usize>(words: &[u64; R], next: u64) -> u32 {
    let lane = arch::lane_id();
    let mut ready = 0u32;
    let mut complete = true;
    for (r, w) in words.iter().enumerate() {
        let k = r as u32 * arch::WARP + lane;
        let ok = (*w >> 32) as u32 == ll_stamp(next + (k / LANES_PER_SLOT) as u64);
        let votes = arch::ballot(ok);
        // Two slots per round: lanes 0-15 hold one, lanes 16-31 the next.
        for half in 0..2 {
            let bits = (votes >> (half * LANES_PER_SLOT)) & 0xffff;
            if complete && bits == 0xffff {
                ready += 1;
            } else {
                complete = false;
            }
        }
    }
    ready
}

/// Step 3's stores: the payload of the first `ready` slots read into `words` (from
/// sequence number `next` on) into the ring, lane 0's first word replaced by `lead`
/// (the first task's opcode and flags, `RELAYED` added when the relay ran it); then a
/// warp barrier, so that every lane's stores precede lane 0's release of `tail`.
///
/// # Safety
/// `ring` the live ring of `mask + 1` slots; the slots `next..next + ready` read and
/// complete. Every lane must call.
#[inline(always)]
unsafe fn store_slots<const R: usize>(ring: *mut u32, mask: u32, words: &[u64; R], ready: u32, next: u64, lead: u32) {
    let lane = arch::lane_id();
    for (r, w) in words.iter().enumerate() {
        let k = r as u32 * arch::WARP + lane;
        let i = k / LANES_PER_SLOT;
        if i < ready {
            let slot = ((next as u32).wrapping_add(i) & mask) as usize;
            let v = if r == 0 && lane == 0 { lead } else { *w as u32 };
            // SAFETY: slot `next + i` of the live ring (masked into it), free for this
            // task (the host reserved it before writing the mailbox); a word within it.
            // Weak: published by lane 0's release of `tail` after the barrier below.
            unsafe { ring.add(slot * LL_WORDS + (k % LANES_PER_SLOT) as usize).write(v) };
        }
    }
    arch::syncwarp();
}

/// Mailbox entries polled per poll: lane `k` reads the `span` of the entry of the
/// `k`-th run after the last one taken: 32 bytes over PCIe. Reading the whole table
/// (then 32 entries, 256 bytes) made a one-task round trip about 0.5 µs slower (H100,
/// 2026-11-25).
const RUNS_PER_POLL: u32 = 4;

/// The table entry of the run `k` after the `taken` runs published so far.
#[inline(always)]
fn run_entry(taken: u32, k: u32) -> usize {
    (taken.wrapping_add(k) % LIST_RUNS as u32) as usize
}

/// Step 7: passes the runs that the host committed, from `*next` on, into the device's
/// table of list runs, then publishes `tail` over them. `span` is this lane's entry of
/// the host's table as this poll read it (lane `k < RUNS_PER_POLL`: the `k`-th run
/// after the `*taken` published; the host gives runs their entries in sequence order). False if no committed run starts at `*next`
/// (an inline batch comes first, or nothing was committed).
///
/// Orderings:
/// - the host commits a run by a release store of its entry's `span` (after the run's
///   tasks, and for a run outside the host ring after the entry's `addr`). Each lane
///   loaded its entry's `span` relaxed at system scope (the poll); the fence here,
///   after every lane's load, makes those loads an acquire pattern: for every `span`
///   seen naming a run, that run's tasks (and `addr`) are visible to loads after it.
///   It also drops this SM's L1 lines of the mailbox from an earlier read.
/// - an entry is taken only if its run starts at `*next`: then its `span` is the
///   run's commit, not an older run's (runs are committed in sequence order, and the
///   host writes an entry again only once its last run completed, which needs this
///   relay to publish it first). A run in the host ring (`RING_RUN`) has its address
///   computed here; any other's `addr` is loaded after the fence (`ld.relaxed.sys`).
/// - the lane that took an entry stores it into the device table (weak stores); the
///   warp barrier orders those stores before lane 0's `st.release.gpu` of `tail`,
///   which the workers' `ld.acquire.sys` of `tail` pairs with (`crate::queue`, step 2;
///   `crate::lists`, step 1), and release is cumulative: through it the workers see
///   the host's tasks too (the relay acquired them above).
/// - the device table's entry is rewritten here only for a run that the host wrote
///   into the same mailbox entry, so only after the entry's last run completed: the
///   race with a worker's scan is the one `crate::lists` (step 2) allows.
///
/// # Safety
/// As for [`relay_loop`]; every lane must call.
#[inline(never)]
unsafe fn take_runs(p: &KernelParams, mailbox: *mut RelayMailbox, host_ring: u64, next: &mut u64, taken: &mut u32, span: u64) -> bool {
    let lane = arch::lane_id();
    let entry = run_entry(*taken, lane);
    let starts = |at: u64| (span >> 32) as u32 & !(RUN_FLAGS >> 32) as u32 > 0 && span as u32 == at as u32;
    if arch::ballot(starts(*next)) == 0 {
        return false;
    }
    arch::fence_acq_rel_sys();
    let table = p.lists as *mut ListRun;
    let mask = p.capacity as u64 - 1;
    loop {
        let votes = arch::ballot(starts(*next));
        if votes == 0 {
            break;
        }
        let from = votes.trailing_zeros();
        let len = ((span >> 32) & !(RUN_FLAGS >> 32)) as u32;
        if lane == from {
            let addr = if span & RING_RUN != 0 {
                let at = host_ring + (*next & mask) * size_of::<Task>() as u64;
                if span & COMPACT_RUN != 0 {
                    // A compact run's tasks fill the second half of its slots, 32
                    // bytes each (`COMPACT_RUN`).
                    (at + len as u64 * size_of::<CompactTask>() as u64) | IN_HOST | COMPACT
                } else {
                    at | IN_HOST
                }
            } else {
                // After the fence: the run's own `addr` (see above).
                unsafe { arch::ld_relaxed_sys_u64(&raw const (*mailbox).runs[entry].addr) }
            };
            unsafe { table.add(entry).write(ListRun::new(span as u32, len, addr)) };
        }
        *next += arch::shfl_idx(len, from) as u64;
        *taken = taken.wrapping_add(1);
    }
    arch::syncwarp();
    if lane == 0 {
        let header = p.header as *mut QueueHeader;
        unsafe { arch::st_release_gpu(&raw mut (*header).tail.value, *next as u32) };
    }
    true
}

/// Every lane gets the whole task of the first polled slot, whose word `i` lane `i`
/// holds (lanes 0-15 hold the first slot in round 0).
#[inline(always)]
fn gather(word: u32) -> Task {
    let mut w = [0u32; LL_WORDS];
    for (i, x) in w.iter_mut().enumerate() {
        *x = arch::shfl_idx(word, i as u32);
    }
    bytemuck::cast(w)
}

/// Step 3b's choice: a lone task the host marked express (a leaf task, its ticket
/// resolved from its record), with no dependency to wait for, and one its type says the
/// relay may run (short: the relay must not stall the batches behind it:
/// `DeviceTask::on_relay`). `Some(reads)`: run it; `reads` says whether it reads memory
/// the host wrote (and so needs the acquire fence first: all but `PURE` types).
#[inline(always)]
fn may_run<S: TaskSet>(t: &Task) -> Option<bool> {
    if t.flags & task_flags::EXPRESS == 0 || t.flags & task_flags::CHILD != 0 || t.wait_counter != 0 {
        return None;
    }
    S::on_relay(t).map(|pure| !pure)
}

/// Step 3b: runs express task `seq` on the relay warp and completes it for its ticket:
/// the signal (release, .gpu) and the record (`Completer::record`: fence.acq_rel.sys,
/// then the stamp), after a warp barrier that orders every lane's writes of the task.
/// Its segment count is left to the worker that claims the slot, which finds
/// [`task_flags::RELAYED`] set and only counts it: the host reuses the slot once the
/// segment is done, so no worker reads a slot that was rewritten under it.
///
/// # Safety
/// As for [`relay_loop`]; `task` is the lone ready slot `seq`, not yet published.
#[inline(always)]
unsafe fn run<S: TaskSet>(p: &KernelParams, done: &Completer, task: &Task, seq: u32, reads: bool) {
    let cx = TaskCx {
        buffers: p.buffers as *const BufferEntry,
        header: p.header as *mut QueueHeader,
        counters: p.counters as *mut u32,
        spawn: SpawnRing::NONE,
        counts: core::ptr::null_mut(),
        child_seg: 0,
        cancel_stamp: 0,
        spawned: core::cell::Cell::new(false),
        declared: crate::task::Declared::NONE,
    };
    // Acquire pattern at system scope: the relaxed loads of the slot's words (which saw
    // the host's stores), then this fence, pair with the host's program order, which
    // puts the buffers' contents and table entries (copies it waited for) before the
    // slot. It also drops this SM's L1 lines, which may hold an older copy of a buffer
    // that an earlier task of the relay read. Workers get the same from their acquire
    // of `tail` (crate::queue, step 2). A noop reads nothing: no fence.
    if reads {
        arch::fence_acq_rel_sys();
    }
    // Never the sentinel (an express task is a user's): only the relay's types.
    let _ = seq;
    let out = crate::worker::warp_outcome(S::execute_relayed(task, &cx));
    arch::syncwarp();
    if arch::lane_id() == 0 {
        unsafe {
            crate::deps::signal(cx.counters, task);
            done.record(seq, out, true);
        }
    }
}

const _: () = assert!(SLOTS_PER_POLL * LANES_PER_SLOT % arch::WARP == 0);
const _: () = assert!(BURST_SLOTS * LANES_PER_SLOT % arch::WARP == 0 && SLOTS_PER_POLL + BURST_SLOTS <= LL_SLOTS as u32 / 2);
const _: () = assert!(LL_WORDS == 16 && size_of::<Task>() == 64);
