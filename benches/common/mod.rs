//! Timing helper shared by the benchmarks' printed summaries.

use std::time::{Duration, Instant};

/// Median wall time of `runs` calls of `f`, after `warmup` calls.
pub fn median(mut f: impl FnMut(), warmup: usize, runs: usize) -> Duration {
    for _ in 0..warmup {
        f();
    }
    let mut t: Vec<Duration> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort();
    t[runs / 2]
}
