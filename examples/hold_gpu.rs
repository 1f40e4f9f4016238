//! A runtime as a neighbour: it lives for a while under a residency policy, idle or
//! busy a share of the time, while another process measures what it has left of the
//! GPU (docs/sharing.md, `tools/gpu/neighbour.sh`).
//!
//!     cargo run --release --example hold_gpu -- <auto|always|idle-MS|drained> <seconds> [busy-percent]
//!
//! Busy means: in every 10 ms window, spin tasks on every worker warp for that share of
//! it, then nothing for the rest.

use resident::{Residency, Runtime, RuntimeConfig, Task};
use std::time::{Duration, Instant};

fn main() -> resident::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let policy = match args.get(1).map(String::as_str) {
        Some("auto") | None => Residency::Auto,
        Some("always") => Residency::Always,
        Some("drained") => Residency::WhenDrained,
        Some(p) if p.starts_with("idle-") => Residency::IdleExit(Duration::from_millis(p[5..].parse().expect("idle-<milliseconds>"))),
        Some(p) => panic!("unknown policy {p}: auto, always, idle-<ms> or drained"),
    };
    let secs: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let busy: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(0).min(100);
    let rt = Runtime::with_config(RuntimeConfig { residency: policy, ..RuntimeConfig::default() })?;
    let warps = rt.backend().workers as usize;
    // The first submission runs at once, so the kernel has been resident before the
    // measurement starts.
    rt.submit(&[Task::noop(0)])?.wait()?;
    println!("hold_gpu: {} ({policy:?}), {secs} s, busy {busy}%", rt.backend());
    let end = Instant::now() + Duration::from_secs(secs);
    let window = Duration::from_millis(10);
    while Instant::now() < end {
        let start = Instant::now();
        if busy > 0 {
            let ns = window.as_nanos() as u64 * busy / 100;
            rt.submit(&vec![Task::spin(ns); warps])?.wait()?;
        }
        if let Some(rest) = window.checked_sub(start.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    println!("hold_gpu: done, {:?}", rt.metrics().residency);
    Ok(())
}
