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

/// A runtime as a neighbour: resident under a policy, busy a share of the time.
#[derive(clap::Parser)]
struct Args {
    /// The residency policy: auto, always, drained, or idle-<milliseconds>.
    #[arg(default_value = "auto", value_parser = parse_policy)]
    policy: Residency,
    /// Seconds to live.
    #[arg(default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    seconds: u64,
    /// Percent of every 10 ms window spent running tasks.
    #[arg(default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=100))]
    busy_percent: u64,
}

fn parse_policy(p: &str) -> Result<Residency, String> {
    match p {
        "auto" => Ok(Residency::Auto),
        "always" => Ok(Residency::Always),
        "drained" => Ok(Residency::WhenDrained),
        _ => match p.strip_prefix("idle-").map(str::parse::<u64>) {
            Some(Ok(ms)) => Ok(Residency::IdleExit(Duration::from_millis(ms))),
            _ => Err(format!("`{p}`: auto, always, drained or idle-<milliseconds>")),
        },
    }
}

fn main() -> resident::Result<()> {
    let args = <Args as clap::Parser>::parse();
    let (policy, secs, busy) = (args.policy, args.seconds, args.busy_percent);
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
