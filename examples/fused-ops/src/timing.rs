//! Timing helpers shared by the fused-op examples: medians of several runs after
//! warm-up, every run's result checked.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// Median wall time of `runs` calls of `f` after `warmup` calls; stops at the first error.
pub fn median(warmup: usize, runs: usize, mut f: impl FnMut() -> resident::Result<()>) -> resident::Result<Duration> {
    for _ in 0..warmup {
        f()?;
    }
    let mut t = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed());
    }
    t.sort();
    Ok(t[t.len() / 2])
}

/// Median of durations measured by the callee (e.g. kernel time without uploads).
pub fn median_of(warmup: usize, runs: usize, mut f: impl FnMut() -> resident::Result<Duration>) -> resident::Result<Duration> {
    for _ in 0..warmup {
        f()?;
    }
    let mut t = (0..runs.max(1)).map(|_| f()).collect::<resident::Result<Vec<_>>>()?;
    t.sort();
    Ok(t[t.len() / 2])
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Ends an example: "all results match" (exit 0), a mismatch (exit 1), or an error (exit 2).
pub fn exit_with(result: resident::Result<bool>) {
    match result {
        Ok(true) => println!("all results match"),
        Ok(false) => {
            eprintln!("MISMATCH");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
