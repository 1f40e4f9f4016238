//! A statistics counter that many threads add to: one cache line per stripe, a thread
//! adding to its own stripe, the stripes summed when read. One shared `AtomicU64` was
//! an RMW per batch on a line every producer writes (under four producers).

use crossbeam::utils::CachePadded;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Stripes: producers seldom exceed this; two threads on one stripe are still correct.
pub(crate) const STRIPES: usize = 8;

#[derive(Default)]
pub(crate) struct StripedCounter {
    stripes: [CachePadded<AtomicU64>; STRIPES],
}

/// This thread's stripe (of [`STRIPES`]): threads take stripes round robin, the first
/// time they ask.
pub(crate) fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static MINE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    MINE.with(|s| *s)
}

impl StripedCounter {
    pub fn add(&self, n: u64) {
        // Relaxed: a statistic; readers order themselves after the adds they count
        // (a join, a ticket's wait).
        self.stripes[stripe()].fetch_add(n, Ordering::Relaxed);
    }

    pub fn sum(&self) -> u64 {
        self.stripes.iter().map(|s| s.load(Ordering::Relaxed)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn striped_counter_sums_every_thread() {
        let c = StripedCounter::default();
        std::thread::scope(|s| {
            for _ in 0..12 {
                s.spawn(|| (0..1000).for_each(|_| c.add(3)));
            }
        });
        assert_eq!(c.sum(), 36_000);
    }
}
