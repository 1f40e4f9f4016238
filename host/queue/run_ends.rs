//! Where each list run ends, by table entry: run `r` uses entry `r % LIST_RUNS`, which
//! is free for run `r` once everything before the end of run `r - LIST_RUNS` has
//! completed. Written and read outside the producer lock, so that the reservation
//! under it touches one line (four producers x 256 spent 0.27 µs a batch under the
//! lock against 0.11 for one, much of it lines of this table handed between cores).
//!
//! The protocol. A reservation takes its run numbers under the producer lock; right
//! after it, for each of its runs `r` in order, it reads the end of run `r - LIST_RUNS`
//! ([`RunEnds::end_before`], waiting if that run's reserver has not written it yet)
//! and then writes its own ([`RunEnds::record`]) into the same entry. Per entry the
//! accesses therefore alternate: the write of run `r`, the read of it by run
//! `r + LIST_RUNS`'s reserver, that reserver's write, and so on. The write of `r +
//! LIST_RUNS` comes after the read of `r` in program order of one thread, and the next
//! reader waits for the exact run number, so no reader sees a later run's end, and no
//! end is overwritten before it is read. A reader waits only for reservers of smaller
//! run numbers, which write right after their lock, with nothing in between that fails
//! and no wait but for smaller run numbers still: no cycle, no wait without end.
//!
//! Orderings: the writer stores `end` (Relaxed), then `run + 1` (Release); the reader
//! loads `run + 1` (Acquire, pairs with that store), then `end` (Relaxed, ordered after
//! it by the Acquire). Nothing else is published through the table.

use crossbeam::utils::CachePadded;
use resident_shared::lists::LIST_RUNS;

use crate::util::sync::atomic::{AtomicU64, Ordering};

struct Entry {
    /// One more than the run last written here (0: none yet).
    run: AtomicU64,
    /// That run's end (the sequence number past its last task).
    end: AtomicU64,
}

/// The ends of the last runs in each table entry (one padded line each: consecutive
/// runs are reserved by different producers).
pub(crate) struct RunEnds {
    entries: Box<[CachePadded<Entry>]>,
}

impl Default for RunEnds {
    fn default() -> Self {
        Self { entries: (0..LIST_RUNS).map(|_| CachePadded::new(Entry { run: AtomicU64::new(0), end: AtomicU64::new(0) })).collect() }
    }
}

impl RunEnds {
    /// The end of the run before `run` in its entry (`run - LIST_RUNS`; 0 for the
    /// first runs, which have none), or `None` if its reserver has not written it yet.
    pub fn try_end_before(&self, run: u64) -> Option<u64> {
        let Some(prior) = run.checked_sub(LIST_RUNS as u64) else { return Some(0) };
        let e = &self.entries[(run % LIST_RUNS as u64) as usize];
        // Acquire: pairs with `record`'s Release store of `run`; `end` was stored before.
        if e.run.load(Ordering::Acquire) != prior + 1 {
            return None;
        }
        Some(e.end.load(Ordering::Relaxed))
    }

    /// [`try_end_before`](Self::try_end_before), waiting for the earlier reserver's
    /// write (which follows its reservation with no wait in between: see the module's
    /// doc).
    pub fn end_before(&self, run: u64) -> u64 {
        let mut turns = 0;
        loop {
            if let Some(end) = self.try_end_before(run) {
                return end;
            }
            crate::util::sync::back_off(&mut turns);
        }
    }

    /// Records that run `run` ends at `end`: after this thread read the end of the run
    /// before it in the entry ([`end_before`](Self::end_before)).
    pub fn record(&self, run: u64, end: u64) {
        let e = &self.entries[(run % LIST_RUNS as u64) as usize];
        debug_assert!(
            run < LIST_RUNS as u64 || e.run.load(Ordering::Relaxed) == run - LIST_RUNS as u64 + 1,
            "run {run} recorded out of turn"
        );
        e.end.store(end, Ordering::Relaxed);
        // Release: pairs with the reader's Acquire load; `end` is seen with it.
        e.run.store(run + 1, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// The first `LIST_RUNS` runs have nothing before them; a later run reads the end
    /// its predecessor in the entry wrote, and not before it is written.
    #[test]
    fn run_ends_read_once_written() {
        let t = RunEnds::default();
        let n = LIST_RUNS as u64;
        assert_eq!(t.try_end_before(0), Some(0));
        assert_eq!(t.try_end_before(n - 1), Some(0));
        assert_eq!(t.try_end_before(n), None);
        t.record(0, 100);
        assert_eq!(t.try_end_before(n), Some(100));
        assert_eq!(t.try_end_before(2 * n), None, "run 2n waits for run n, not run 0");
        t.record(n, 200);
        assert_eq!(t.end_before(2 * n), 200);
    }

    /// Threads taking runs in turn (as reservations do under the producer lock) and
    /// resolving and recording them after: every run reads its predecessor's end.
    #[test]
    fn run_ends_beside_each_other() {
        let t = RunEnds::default();
        let next = std::sync::Mutex::new(0u64);
        let per = if cfg!(miri) { 100 } else { 5000 };
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..per {
                        let r = {
                            let mut n = next.lock().unwrap();
                            *n += 1;
                            *n - 1
                        };
                        let before = t.end_before(r);
                        let want = if r < LIST_RUNS as u64 { 0 } else { (r - LIST_RUNS as u64) * 10 + 7 };
                        assert_eq!(before, want, "run {r}");
                        t.record(r, r * 10 + 7);
                    }
                });
            }
        });
    }
}

/// loom: two reservers of runs `r` and `r + LIST_RUNS` (taken in that order, as the
/// producer lock hands them out): the second reads the first's end, never a stale one.
#[cfg(all(test, loom))]
mod loom_run_ends {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn loom_run_end_read_after_its_write() {
        loom::model(|| {
            let t = Arc::new(RunEnds::default());
            let n = LIST_RUNS as u64;
            t.record(0, 5);
            let t2 = t.clone();
            let w = loom::thread::spawn(move || t2.record(n, 9));
            // Run 2n's reserver, after run n's took its number.
            let got = t.end_before(2 * n);
            assert_eq!(got, 9);
            w.join().unwrap();
        });
    }
}
