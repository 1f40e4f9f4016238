//! Process-wide checks on the CPU backend that must not share the process with other
//! tests (thread counts, allocation totals, RSS, all cores): leaks across runtimes, the
//! many-producer stress test, and a short soak. One at a time (`TURN`). These run in CI.

mod common;

use resident::{Runtime, RuntimeConfig};
use std::sync::Mutex;
use std::time::Duration;

static TURN: Mutex<()> = Mutex::new(());

fn cpu(capacity: u32) -> Runtime {
    Runtime::with_config(RuntimeConfig { capacity, cpu_workers: 2, shutdown_timeout: Duration::from_millis(500), ..RuntimeConfig::cpu() })
        .unwrap()
}

#[test]
fn no_leaked_threads_or_memory_across_runtimes() {
    let _t = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // With a watchdog too: its thread starts with the runtime and must stop with it.
    let make = || {
        Runtime::with_config(RuntimeConfig {
            capacity: 1 << 12,
            cpu_workers: 3,
            task_deadline: Some(Duration::from_secs(30)),
            ..RuntimeConfig::cpu()
        })
        .unwrap()
    };
    common::leaks::no_leaks_across_runtimes(make, 4, true, || None, 0);
}

/// Tens of millions of tiny tasks: 4 producers, 4 consumers, checksums; well under a
/// minute on two cores.
#[test]
fn stress_many_producers_and_consumers() {
    let _t = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let rt = cpu(1 << 16);
    let n = common::stress::many_producers_and_consumers(&rt, 4, 4, 1 << 16, 160, 8192);
    assert!(n >= 40_000_000);
}

#[test]
fn soak_short() {
    let _t = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let rt = cpu(1 << 14);
    let d = common::soak::soak_duration(Duration::from_secs(4));
    let limits = common::soak::SoakLimits { rss_growth: 64 << 20, device_growth: 0 };
    common::soak::soak(&rt, d, 3, Duration::from_millis(500), || None, limits);
}
