//! Timing helper shared by the benchmarks' printed summaries.
#![allow(dead_code)]

pub mod baselines;
pub mod streaming_rival;

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

/// Tickets a streaming producer keeps in flight before it waits for its oldest.
pub const IN_FLIGHT: usize = 8;

/// One producer: submits `tasks` in batches of `batch`, with up to [`IN_FLIGHT`]
/// tickets outstanding, then waits for the rest.
pub fn stream_batches(rt: &resident::Runtime, batch: usize, tasks: &[resident::Task]) {
    let mut q = std::collections::VecDeque::with_capacity(IN_FLIGHT + 1);
    for b in tasks.chunks(batch) {
        q.push_back(rt.submit(b).unwrap());
        if q.len() > IN_FLIGHT {
            q.pop_front().unwrap().wait().unwrap();
        }
    }
    q.into_iter().for_each(|t| t.wait().unwrap());
}

/// Median of `runs` durations that `f` measures itself, after `warmup` calls.
pub fn median_of(mut f: impl FnMut() -> Duration, warmup: usize, runs: usize) -> Duration {
    (0..warmup).for_each(|_| {
        f();
    });
    let mut t: Vec<Duration> = (0..runs).map(|_| f()).collect();
    t.sort();
    t[runs / 2]
}

/// Profiling builds (`RESIDENT_DEVICE_TIMING`, docs/profiling.md): the workers' SM cycles
/// a task in each step of their loop between two `Probe::device_steps` readings, as
/// one line after `label`; nothing where either reading is missing (a plain build, or
/// a relaunch in between, which restarts the warps' counts).
pub fn print_device_steps(label: &str, before: Option<[u64; resident::steps::STEPS]>, after: Option<[u64; resident::steps::STEPS]>) {
    if let (Some(a), Some(b)) = (before, after) {
        let d: Vec<u64> = a.iter().zip(&b).map(|(a, b)| b.saturating_sub(*a)).collect();
        let tasks = d[resident::steps::step::TASKS].max(1) as f64;
        let per: Vec<String> =
            resident::steps::NAMES.iter().zip(&d).skip(1).map(|(n, c)| format!("{n} {:.0}", *c as f64 / tasks)).collect();
        println!("{label}device steps, {} tasks, SM cycles a task: {}", d[resident::steps::step::TASKS], per.join(", "));
    }
}
