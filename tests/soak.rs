//! The soak: full submission rate from several threads for `SOAK_SECS` seconds
//! (default 600), every task checked exactly once, memory sampled every 5 s and
//! printed; fails on a lost task or memory growth (docs/reliability.md). Ignored by
//! default; on a GPU machine:
//!
//!     SOAK_SECS=600 <soak test binary> --include-ignored --exact soak --nocapture
//!
//! `SOAK_BACKEND=cpu` runs it on the CPU backend instead (a dry run anywhere).

mod common;

use resident::{Runtime, RuntimeConfig};
use std::time::Duration;

#[test]
#[ignore = "needs a CUDA GPU; runs SOAK_SECS seconds (default 600)"]
fn soak() {
    let cpu = std::env::var("SOAK_BACKEND").is_ok_and(|b| b == "cpu");
    let config = if cpu { RuntimeConfig::cpu() } else { RuntimeConfig::cuda() };
    let rt = Runtime::with_config(RuntimeConfig { capacity: 1 << 16, ..config }).expect("a CUDA GPU (or SOAK_BACKEND=cpu)");
    eprintln!("{}", rt.backend());
    let threads = std::env::var("SOAK_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(4);
    let d = common::soak::soak_duration(Duration::from_secs(600));
    let limits = common::soak::SoakLimits { rss_growth: 64 << 20, device_growth: 16 << 20 };
    let gpu = rt.device().unwrap();
    let n = common::soak::soak(
        &rt,
        d,
        threads,
        Duration::from_secs(5),
        || gpu.memory_info().map(|(free, total)| (total - free) as u64),
        limits,
    );
    rt.shutdown().unwrap();
    eprintln!("soak done: {n} tasks");
}
