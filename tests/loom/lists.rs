//! loom model of the table of list runs (device/src/lists.rs, steps 1-3; the host side
//! is the CPU backend's `publish_run`, host/backend/cpu/backend.rs): an entry is rewritten for
//! a later run while another worker scans the table, and every worker still finds its
//! slot's run, reads that run's task (a weak read of the list, ordered by the acquire
//! of `tail`), and none takes another run's entry for its own. Spans are packed and
//! tested with the runtime's own `resident_shared::lists::{pack, holds}`.
//!
//! It fails (checked 2026-11-24) if `tail` is published relaxed (the list's task read
//! races its write), if the worker's load of `tail` is relaxed (the same), or if the
//! host rewrites an entry before its run completed (a worker pairs the old span with
//! the new address).

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use loom::thread;
use resident_shared::lists::{holds, pack};

/// Entries in the modelled table (the runtime has `LIST_RUNS` = 64): two, so that the
/// third run reuses entry 0 while a worker of the second run scans both.
const ENTRIES: usize = 2;
/// Runs of one task each: seq 0 in entry 0, seq 1 in entry 1, seq 2 in entry 0 again.
const RUNS: usize = 3;

struct Table {
    /// `ListRun::span` and `ListRun::addr` (here an index into `lists`), per entry.
    span: [AtomicU64; ENTRIES],
    addr: [AtomicU64; ENTRIES],
    /// The lists' tasks, written by the host before it publishes them (weak).
    lists: [UnsafeCell<u32>; RUNS],
    /// `QueueHeader::tail`.
    tail: AtomicU32,
    /// Completion of each slot (the segment count and stamp the host waits on).
    done: [AtomicU32; RUNS],
}

/// The task the host puts in the list of run `seq`.
fn task_of(seq: u32) -> u32 {
    100 + seq
}

impl Table {
    fn new() -> Self {
        Self {
            span: std::array::from_fn(|_| AtomicU64::new(0)),
            addr: std::array::from_fn(|_| AtomicU64::new(0)),
            lists: std::array::from_fn(|_| UnsafeCell::new(0)),
            tail: AtomicU32::new(0),
            done: std::array::from_fn(|_| AtomicU32::new(0)),
        }
    }

    /// The host's `publish_run` for a run of one task at `seq`, in `entry`, then
    /// `publish`: relaxed stores of `addr` and `span`, release store of `tail`.
    fn publish_run(&self, seq: u32, entry: usize) {
        self.lists[seq as usize].with_mut(|p| unsafe { *p = task_of(seq) });
        self.addr[entry].store(seq as u64, Ordering::Relaxed);
        self.span[entry].store(pack(seq, 1), Ordering::Relaxed);
        self.tail.store(seq + 1, Ordering::Release);
    }

    /// `ListTable::find` with the worker's `RunCache` (span, addr): the cached run if it
    /// holds `seq`, else a scan that loads every entry's `addr` and `span` (relaxed)
    /// before testing any: the device's loads are all in flight at once and may be
    /// answered in any order, so the model reads `addr` first, the order in which a
    /// rewrite between the two loads could pair an old address with a new span.
    fn find(&self, seq: u32, cache: &mut (u64, u64)) -> Option<usize> {
        if !holds(cache.0, seq) {
            let mut found = None;
            let entries: [(u64, u64); ENTRIES] = std::array::from_fn(|e| {
                let addr = self.addr[e].load(Ordering::Relaxed);
                (self.span[e].load(Ordering::Relaxed), addr)
            });
            for (span, addr) in entries {
                if holds(span, seq) {
                    assert!(found.is_none(), "two entries hold slot {seq}");
                    found = Some((span, addr));
                }
            }
            *cache = found?;
        }
        Some(cache.1 as usize + seq.wrapping_sub(cache.0 as u32) as usize)
    }
}

/// A worker: its slots in order, each after an acquire of `tail` that shows it
/// published (`crate::queue`, step 2); then the task read from the list in place.
fn worker(t: &Table, seqs: &[u32]) {
    let mut tail_seen = 0u32;
    let mut cache = (0u64, 0u64);
    for &seq in seqs {
        while seq >= tail_seen {
            tail_seen = t.tail.load(Ordering::Acquire);
            thread::yield_now();
        }
        let at = t.find(seq, &mut cache).unwrap_or_else(|| panic!("published slot {seq} in no run"));
        assert_eq!(at, seq as usize, "slot {seq} took another run's entry");
        let task = t.lists[at].with(|p| unsafe { *p });
        assert_eq!(task, task_of(seq), "slot {seq} read a task its run did not hold");
        // Completion, as the segment count's release add.
        t.done[seq as usize].fetch_add(1, Ordering::Release);
    }
}

#[test]
fn list_entry_reused_while_another_worker_scans() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        let t = Arc::new(Table::new());
        t.publish_run(0, 0);
        t.publish_run(1, 1);
        // Spawned after the first two publications (so they need no spinning): worker 1
        // runs slots 0 and 2 (entry 0, then entry 0 rewritten); worker 2 runs slot 1 and
        // scans entry 0 while the host may be rewriting it.
        let w1 = {
            let t = t.clone();
            thread::spawn(move || worker(&t, &[0, 2]))
        };
        let w2 = {
            let t = t.clone();
            thread::spawn(move || worker(&t, &[1]))
        };
        // Entry 0 again, only once its run has completed (the host saw its stamp).
        while t.done[0].load(Ordering::Acquire) == 0 {
            thread::yield_now();
        }
        t.publish_run(2, 0);
        w1.join().unwrap();
        w2.join().unwrap();
        for seq in 0..RUNS {
            assert_eq!(t.done[seq].load(Ordering::Relaxed), 1, "slot {seq} ran once");
        }
    });
}
