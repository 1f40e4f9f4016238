//! Timing helper shared by the benchmarks' printed summaries.
#![allow(dead_code)]

pub mod baselines;

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

/// Percentiles (0..=100) of a set of samples, in microseconds.
pub fn percentiles(samples: &mut [Duration], ps: &[f64]) -> Vec<f64> {
    samples.sort();
    ps.iter()
        .map(|p| {
            let i = ((p / 100.0) * (samples.len() - 1) as f64).round() as usize;
            samples[i].as_secs_f64() * 1e6
        })
        .collect()
}

/// `n` samples of the wall time of `f`, after `warmup` unrecorded calls.
pub fn samples(mut f: impl FnMut(), warmup: usize, n: usize) -> Vec<Duration> {
    for _ in 0..warmup {
        f();
    }
    (0..n)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect()
}
