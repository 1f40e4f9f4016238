//! Elastic residency on the CPU backend (the scenarios are in
//! `common/residency.rs`, the GPU runs them in `residency_gpu.rs`). Each runs in a
//! child process under a time limit: a hang fails its test alone.

mod common;

use common::residency;
use resident::RuntimeConfig;
use std::time::Duration;

fn cpu() -> RuntimeConfig {
    RuntimeConfig { capacity: 1 << 12, cpu_workers: 2, shutdown_timeout: Duration::from_secs(2), ..RuntimeConfig::cpu() }
}

const LIMIT: Duration = Duration::from_secs(120);

isolated_test!(cycles_exactly_once, LIMIT, residency::cycles_exactly_once(cpu, 40));
isolated_test!(producers_race_exits, LIMIT, residency::producers_race_exits(cpu, 4, 60));
isolated_test!(idle_exit_policy, LIMIT, residency::idle_exit_policy(cpu));
isolated_test!(shutdown_while_exited, LIMIT, residency::shutdown_while_exited(cpu));
isolated_test!(fault_after_relaunch, LIMIT, residency::fault_after_relaunch(cpu));
isolated_test!(failed_relaunch_recovers, LIMIT, residency::failed_relaunch_recovers(cpu));
isolated_test!(kernel_out, LIMIT, residency::kernel_out(cpu));
