//! Elastic residency on a CUDA GPU (issue 22; the scenarios are in
//! `common/residency.rs`, shared with `residency_cpu.rs`). Each runs in a child process
//! under a time limit. On a GPU:
//!
//!     <residency_gpu test binary> --include-ignored --test-threads=1
//!
//! Without a GPU these fail: `RuntimeConfig::cuda()` refuses to start.

mod common;

use common::residency;
use resident::RuntimeConfig;
use std::time::Duration;

fn gpu() -> RuntimeConfig {
    RuntimeConfig { capacity: 1 << 14, shutdown_timeout: Duration::from_secs(2), ..RuntimeConfig::cuda() }
}

const LIMIT: Duration = Duration::from_secs(120);

isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    cycles_exactly_once,
    LIMIT,
    residency::cycles_exactly_once(gpu, 200)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    producers_race_exits,
    LIMIT,
    residency::producers_race_exits(gpu, 4, 200)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    idle_exit_policy,
    LIMIT,
    residency::idle_exit_policy(gpu)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    shutdown_while_exited,
    LIMIT,
    residency::shutdown_while_exited(gpu)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    fault_after_relaunch,
    LIMIT,
    residency::fault_after_relaunch(gpu)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    kernel_out,
    LIMIT,
    residency::kernel_out(gpu)
);
