//! Soak: full submission rate from several threads for a long time (`SOAK_SECS`),
//! every task checked exactly once through mark counters, memory sampled every few
//! seconds (process RSS, the runtime's live allocations, the GPU's used memory) and
//! printed as a table. Fails if any task is lost or run twice, any ticket fails, or
//! memory grows beyond a small bound after warm-up.

use resident::{Runtime, Task, Ticket};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::leaks::rss_bytes;

/// Soak duration: `SOAK_SECS`, else `default`.
pub fn soak_duration(default: Duration) -> Duration {
    std::env::var("SOAK_SECS").ok().and_then(|v| v.parse().ok()).map(Duration::from_secs).unwrap_or(default)
}

/// Limits on growth between the first sample after warm-up and the end.
pub struct SoakLimits {
    pub rss_growth: u64,
    pub device_growth: u64,
}

/// Runs the soak on `rt` for `duration` from `threads` producer threads, sampling
/// every `every`. `device_used` measures the GPU's used bytes (None on the CPU).
/// Returns the number of tasks run.
pub fn soak(
    rt: &Runtime,
    duration: Duration,
    threads: usize,
    every: Duration,
    device_used: impl Fn() -> Option<u64>,
    limits: SoakLimits,
) -> u64 {
    const REGION: usize = 1 << 18;
    let marks = rt.buffer::<u32>(threads * REGION).unwrap();
    let stop = AtomicBool::new(false);
    let before = rt.metrics().completed;
    let start = Instant::now();
    let mut samples: Vec<(Duration, u64, u64, i64, Option<u64>)> = vec![];
    let expected: Vec<Vec<u32>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|th| {
                let (marks, stop) = (&marks, &stop);
                s.spawn(move || producer(rt, marks, th * REGION, REGION, stop))
            })
            .collect();
        eprintln!("{:>8} {:>14} {:>10} {:>10} {:>14} {:>12}", "secs", "tasks", "M tasks/s", "RSS MiB", "live alloc MiB", "device MiB");
        let mut last = (Instant::now(), rt.metrics().completed);
        while start.elapsed() < duration {
            std::thread::sleep(every.min(duration.saturating_sub(start.elapsed())).max(Duration::from_millis(10)));
            let done = rt.metrics().completed - before;
            let rate = (done - (last.1 - before)) as f64 / last.0.elapsed().as_secs_f64() / 1e6;
            last = (Instant::now(), rt.metrics().completed);
            let live = resident::live_allocations();
            let live_total = live.device_bytes + live.pinned_bytes + live.host_bytes;
            let row = (start.elapsed(), done, rss_bytes(), live_total, device_used());
            eprintln!(
                "{:>8.1} {:>14} {:>10.2} {:>10.1} {:>14.1} {:>12}",
                row.0.as_secs_f64(),
                row.1,
                rate,
                row.2 as f64 / 1048576.0,
                row.3 as f64 / 1048576.0,
                row.4.map_or("-".into(), |d| format!("{:.1}", d as f64 / 1048576.0))
            );
            samples.push(row);
        }
        stop.store(true, Ordering::Relaxed);
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let ran = rt.metrics().completed - before;
    let got = marks.read().unwrap();
    let mut lost = 0u64;
    let mut twice = 0u64;
    for (th, want) in expected.iter().enumerate() {
        for (i, &w) in want.iter().enumerate() {
            let g = got[th * REGION + i];
            lost += w.saturating_sub(g) as u64;
            twice += g.saturating_sub(w) as u64;
        }
    }
    let marked: u64 = expected.iter().flatten().map(|&v| v as u64).sum();
    eprintln!(
        "soak: {ran} tasks in {:?} ({:.2} M tasks/s), {marked} marks checked: {lost} lost, {twice} run twice",
        start.elapsed(),
        ran as f64 / start.elapsed().as_secs_f64() / 1e6
    );
    assert_eq!((lost, twice), (0, 0), "tasks lost or run twice");
    assert_eq!(marked, ran, "every completed task was a checked mark");
    // Memory: compare the end with the first sample after a quarter of the run.
    let warm = samples.iter().find(|r| r.0 >= duration / 4).or(samples.first());
    if let (Some(w), Some(end)) = (warm, samples.last()) {
        assert!(end.2 <= w.2 + limits.rss_growth, "RSS grew from {} to {} bytes", w.2, end.2);
        assert!(end.3 <= w.3, "live allocations grew from {} to {} bytes", w.3, end.3);
        if let (Some(a), Some(b)) = (w.4, end.4) {
            assert!(b <= a + limits.device_growth, "device memory in use grew from {a} to {b} bytes");
        }
    }
    ran
}

/// One producer: batches of mixed sizes (relay-sized, medium, large) over its region,
/// at most 16 tickets in flight; returns how often it marked each element.
fn producer(rt: &Runtime, marks: &resident::Buffer<u32>, base: usize, region: usize, stop: &AtomicBool) -> Vec<u32> {
    let mut expected = vec![0u32; region];
    let mut in_flight: VecDeque<Ticket> = VecDeque::new();
    let mut at = 0usize;
    let mut k = 0usize;
    while !stop.load(Ordering::Relaxed) {
        k += 1;
        let len = match k % 8 {
            0 => 8192,
            1..=3 => 1 + k % 32,
            _ => 1024,
        };
        let tasks: Vec<Task> = (0..len)
            .map(|j| {
                let i = (at + j) % region;
                expected[i] += 1;
                Task::mark(marks.all(), (base + i) as u32)
            })
            .collect();
        at = (at + len) % region;
        in_flight.push_back(rt.submit(&tasks).unwrap());
        if in_flight.len() > 16 {
            in_flight.pop_front().unwrap().wait().unwrap();
        }
    }
    for t in in_flight {
        t.wait().unwrap();
    }
    expected
}
