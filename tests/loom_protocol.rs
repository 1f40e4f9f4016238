//! A loom model of the queue protocol's host side and its handshakes with the workers:
//! publication (`tail`), claims (`head`), per-task records (weak) published by the
//! segment count (acq_rel read-modify-writes) and the finisher's segment record
//! (`stamp` after a fence), the host's scan (`completed`), and slot and count reuse. loom explores the interleavings and
//! flags any access to a slot or record that no happens-before edge orders.
//!
//! `loom/tickets.rs` models the host's ticket hand-offs: a fault or shutdown racing a
//! submit and the scan (every ticket resolves, once), and the notifier's wake-up.
//! `loom/lists.rs` models the table of list runs: an entry rewritten for a later run
//! while another worker scans the table. `loom/producers.rs` models producers side by
//! side (validation under the registries' read lock until the reservation, commits in
//! sequence order) and a buffer dropped while they run. `loom/inbox.rs` models a peer link's inbox (the relay's batched hand-back).
//! `loom/spawn.rs` models the spawn ring: range pushes after a reservation, batched pops
//! by count that copy out and hand slots back, slots reused. `loom/outbox.rs` models a link's
//! outbox: pushers on positions from an atomic add, one popper, slots reused.
//!
//! It is a model, not the code: the runtime reaches queue memory through raw pointers
//! and `device/src/arch`, which loom cannot instrument. Each atomic below mirrors one in
//! the code, with the same ordering; the comments name where.
//!
//!     RUSTFLAGS="--cfg loom" cargo test --release --test loom_protocol
#![cfg(loom)]

#[path = "loom/tickets.rs"]
mod tickets;

#[path = "loom/lists.rs"]
mod lists;

#[path = "loom/producers.rs"]
mod producers;

#[path = "loom/outbox.rs"]
mod outbox;

#[path = "loom/inbox.rs"]
mod inbox;

#[path = "loom/spawn.rs"]
mod spawn;

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
use loom::thread;
use resident_shared::segment;

/// Slots in the modelled ring (at most 4); fewer slots than tasks forces reuse.
const MAX_CAP: usize = 4;

struct Queue {
    cap: u32,
    tasks: u32,
    /// Tasks per segment (the runtime's `segment_size`: at most half the ring).
    seg: u32,
    ring: [UnsafeCell<u32>; MAX_CAP],
    /// Per-task records (`Completion`), weak stores.
    payload: [UnsafeCell<u32>; MAX_CAP],
    /// `SegmentCount::state` and `first`, per entry.
    pending: [AtomicU64; MAX_CAP],
    first: [AtomicU32; MAX_CAP],
    /// `SegmentDone::stamp`, per entry.
    done: [AtomicU32; MAX_CAP],
    head: AtomicU32,
    tail: AtomicU32,
    /// `worker_flags::RELEASE_COUNT`: release adds, and a fence by the finisher.
    release_count: bool,
}

impl Queue {
    fn new(cap: u32, seg: u32, tasks: u32) -> Self {
        assert!(cap as usize <= MAX_CAP && seg <= cap / 2);
        Self {
            cap,
            tasks,
            seg,
            ring: std::array::from_fn(|_| UnsafeCell::new(0)),
            payload: std::array::from_fn(|_| UnsafeCell::new(0)),
            pending: std::array::from_fn(|_| AtomicU64::new(0)),
            first: std::array::from_fn(|_| AtomicU32::new(0)),
            done: std::array::from_fn(|_| AtomicU32::new(0)),
            head: AtomicU32::new(0),
            tail: AtomicU32::new(0),
            release_count: false,
        }
    }

    /// First task and length of the segment holding `seq` (one batch of `tasks`).
    fn segment(&self, seq: u32) -> (u32, u32) {
        let first = seq - seq % self.seg;
        (first, self.seg.min(self.tasks - first))
    }
}

/// One worker: device/src/worker.rs with claim 1, completion by
/// device/src/completion.rs.
fn worker(q: &Queue) {
    loop {
        // queue.rs start_claim: atom.relaxed.gpu.add
        let seq = q.head.fetch_add(1, Ordering::Relaxed);
        if seq >= q.tasks {
            return; // the model's stand-in for the sentinel: no more slots will come
        }
        // queue.rs wait_published: ld.acquire.sys of tail
        while q.tail.load(Ordering::Acquire) <= seq {
            thread::yield_now();
        }
        let i = (seq % q.cap) as usize;
        let task = q.ring[i].with(|p| unsafe { *p });
        assert_eq!(task, 100 + seq, "the worker read the task of its own lap");
        // completion.rs step 1: the per-task record, a weak store.
        q.payload[i].with_mut(|p| unsafe { *p = task + 1 });
        let (first, len) = q.segment(seq);
        let e = (first % q.cap) as usize;
        if seq == first {
            // st.relaxed.gpu of `first`, published by the add below.
            q.first[e].store(seq, Ordering::Relaxed);
        }
        // Step 4: the 64-bit atom.acq_rel.gpu.add on the segment count (a task of the
        // model never fails: the failure half stays zero).
        // With RELEASE_COUNT: atom.release.gpu.add, and the finisher's fence.acq_rel.gpu.
        let add = segment::completion_add(false);
        let order = if q.release_count { Ordering::Release } else { Ordering::AcqRel };
        if let Some(failures) = segment::finished(q.pending[e].fetch_add(add, order).wrapping_add(add), len) {
            assert_eq!(failures, 0);
            if q.release_count {
                fence(Ordering::AcqRel);
            }
            // Step 5, the finisher: reset, fence.acq_rel.sys, st.relaxed.sys stamp.
            // A child finisher reads `first` (a queue task computes it): the add chain
            // must make the first task's store visible.
            let f = q.first[e].load(Ordering::Relaxed);
            assert_eq!(f, first, "the finisher sees its segment's first task");
            q.pending[e].store(0, Ordering::Relaxed);
            fence(Ordering::Release);
            q.done[e].store(f + 1, Ordering::Relaxed);
        }
    }
}

/// The host's completion scan (host/queue/completions.rs advance): returns the new
/// prefix of completed segments, whose records it read.
fn scan(q: &Queue, prefix: &mut u32, published: u32) {
    while *prefix < published {
        let (first, len) = q.segment(*prefix);
        // Acquire load of the segment's stamp: pairs with the finisher's fence +
        // relaxed store, and through the count with every task of the segment.
        if q.done[(first % q.cap) as usize].load(Ordering::Acquire) != first + 1 {
            break;
        }
        for seq in first..first + len {
            let v = q.payload[(seq % q.cap) as usize].with(|p| unsafe { *p });
            assert_eq!(v, 100 + seq + 1, "the host read the result of task {seq}");
        }
        *prefix = first + len;
    }
}

fn model(workers: usize, cap: u32, seg: u32, tasks: u32, spawn_after_publish: bool) {
    model_with(workers, cap, seg, tasks, spawn_after_publish, false)
}

fn model_with(workers: usize, cap: u32, seg: u32, tasks: u32, spawn_after_publish: bool, release_count: bool) {
    let q = Arc::new(Queue { release_count, ..Queue::new(cap, seg, tasks) });
    let spawn = |q: &Arc<Queue>| -> Vec<_> {
        (0..workers)
            .map(|_| {
                let q = q.clone();
                thread::spawn(move || worker(&q))
            })
            .collect()
    };
    let mut handles = if spawn_after_publish { vec![] } else { spawn(&q) };
    // The producer (host/queue/producer.rs submit), which drives the scan while it
    // waits for room, as the runtime's producer does.
    let mut prefix = 0;
    for seq in 0..tasks {
        while prefix + cap <= seq {
            scan(&q, &mut prefix, seq);
            thread::yield_now();
        }
        // Stage: a plain write of the slot, ordered after the scan's read of the
        // record that freed it (program order) ...
        q.ring[(seq % cap) as usize].with_mut(|p| unsafe { *p = 100 + seq });
        // ... and published by the release of tail (the copy into `tail` that stream
        // order places after the slot copy; the CPU backend's store(Release)).
        q.tail.store(seq + 1, Ordering::Release);
    }
    if spawn_after_publish {
        handles = spawn(&q);
    }
    while prefix < tasks {
        scan(&q, &mut prefix, tasks);
        thread::yield_now();
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(prefix, tasks, "every task completed once and was read once");
}

/// Two slots, three tasks: slot 0 and its count are reused after the host read its
/// segment record.
#[test]
fn one_worker_slot_reuse() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| model(1, 2, 1, 3, false));
}

/// Two workers finish the two tasks of one segment in either order; whichever adds
/// last publishes both records.
#[test]
fn two_workers_share_a_segment() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| model(2, 4, 2, 2, true));
}

/// The same with `worker_flags::RELEASE_COUNT`: release adds, and only the finisher
/// acquires, by a fence after its add (the later adds extend each earlier release).
#[test]
fn two_workers_share_a_segment_release_count() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| model_with(2, 4, 2, 2, true, true));
}

#[test]
fn two_workers_race_for_published_slots() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    // Two workers racing for two published tasks while the host scans: claims are
    // exclusive, completions land in either order, the scan reads each record once.
    // (Workers start after publication: a worker spinning on `tail` while the producer
    // spins for room is progress by spinning, whose state space loom cannot bound;
    // slot reuse is covered by the one-worker model.)
    b.check(|| model(2, 2, 1, 2, true));
}

/// Express tasks (docs/protocol.md, R8): the relay warp runs a lone task, writes its
/// record (status and result, then a release of the stamp at system scope), and only
/// then publishes the slot, marked RELAYED, with a release of `tail`; the worker that
/// claimed the slot only counts it, and the finisher releases the segment's record. The
/// host resolves the ticket from the task's record and rewrites the slot (the next
/// lap) only after the segment's record. loom checks: the host that sees the record
/// sees the task's output and status; the segment's record never comes first; and the
/// host's rewrite of the slot is ordered after the worker's read of it (a data race on
/// the slot otherwise).
#[test]
fn express_task_run_by_the_relay() {
    const EXPRESS: u32 = 1;
    const RELAYED: u32 = 2;
    loom::model(|| {
        let output = Arc::new(UnsafeCell::new(0u32));
        let status = Arc::new(UnsafeCell::new(u32::MAX));
        let stamp = Arc::new(AtomicU32::new(0));
        let slot = Arc::new(UnsafeCell::new(0u32));
        let tail = Arc::new(AtomicU32::new(0));
        let count = Arc::new(AtomicU32::new(0));
        let seg_done = Arc::new(AtomicU32::new(0));

        let relay = {
            let (output, status, stamp, slot, tail) = (output.clone(), status.clone(), stamp.clone(), slot.clone(), tail.clone());
            thread::spawn(move || {
                // Step 3b: run the task, then the record: weak stores, fence, stamp.
                output.with_mut(|p| unsafe { *p = 42 });
                status.with_mut(|p| unsafe { *p = 0 });
                fence(Ordering::Release);
                stamp.store(1, Ordering::Relaxed);
                // Step 3: the slot, marked, then `tail` with release.
                slot.with_mut(|p| unsafe { *p = EXPRESS | RELAYED });
                tail.store(1, Ordering::Release);
            })
        };
        let worker = {
            let (slot, tail, count, seg_done, stamp) = (slot.clone(), tail.clone(), count.clone(), seg_done.clone(), stamp.clone());
            thread::spawn(move || {
                while tail.load(Ordering::Acquire) < 1 {
                    thread::yield_now();
                }
                let word = slot.with(|p| unsafe { *p });
                assert_eq!(word, EXPRESS | RELAYED, "the worker sees the relay's mark");
                // Relayed: no run, no record; only the count. One task: it finishes.
                if count.fetch_add(1, Ordering::AcqRel) + 1 == 1 {
                    assert_eq!(stamp.load(Ordering::Relaxed), 1, "the task's record was written before its slot was published");
                    fence(Ordering::Release);
                    seg_done.store(1, Ordering::Relaxed);
                }
            })
        };
        // The host: the ticket from the record, then the slot's reuse after the segment.
        let mut resolved = false;
        loop {
            if !resolved && stamp.load(Ordering::Acquire) == 1 {
                assert_eq!(status.with(|p| unsafe { *p }), 0, "status visible with the stamp");
                assert_eq!(output.with(|p| unsafe { *p }), 42, "the task's output visible with its record");
                resolved = true;
            }
            if seg_done.load(Ordering::Acquire) == 1 {
                assert!(resolved || stamp.load(Ordering::Relaxed) == 1, "the segment's record came after the task's");
                break;
            }
            thread::yield_now();
        }
        // The next lap's staging of the slot: must not race with the worker's read.
        slot.with_mut(|p| unsafe { *p = 0 });
        relay.join().unwrap();
        worker.join().unwrap();
    });
}
