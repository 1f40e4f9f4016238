//! Several runtimes in one process, one per CUDA device, and links between them
//! (the scenarios are in `common/multi.rs`, shared with `multi_cpu.rs`). On a
//! machine with two GPUs:
//!
//!     <multi_gpu test binary> --include-ignored --test-threads=1
//!
//! With one GPU the scenarios that need two fail (`Error::NoDevice`); `MULTI_GPU_SAME=1`
//! runs them with both runtimes' links on device 0 and a CPU runtime as the second
//! (one runtime per device per process).

mod common;

use common::multi;
use resident::RuntimeConfig;
use std::time::Duration;

fn gpu(device: usize) -> RuntimeConfig {
    if device > 0 && std::env::var_os("MULTI_GPU_SAME").is_some() {
        return RuntimeConfig {
            device,
            capacity: 1 << 14,
            cpu_workers: 4,
            shutdown_timeout: Duration::from_secs(2),
            ..RuntimeConfig::cpu()
        };
    }
    RuntimeConfig { device, capacity: 1 << 14, shutdown_timeout: Duration::from_secs(2), ..RuntimeConfig::cuda() }
}

const LIMIT: Duration = Duration::from_secs(120);

isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    runtimes_per_device,
    LIMIT,
    multi::runtimes_per_device(gpu, 2)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    foreign_handles,
    LIMIT,
    multi::foreign_handles(gpu)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    links_exactly_once_small,
    LIMIT,
    multi::links_exactly_once(gpu, 200, 3, true)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    links_one_way,
    LIMIT,
    multi::links_exactly_once(gpu, 20000, 12, false)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    links_exactly_once,
    LIMIT,
    multi::links_exactly_once(gpu, 20000, 12, true)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    link_errors,
    LIMIT,
    multi::link_errors(gpu)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    peer_links_exactly_once_small,
    LIMIT,
    multi::peer_links_exactly_once(gpu, 200, 3, true)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    peer_links_exactly_once,
    LIMIT,
    multi::peer_links_exactly_once(gpu, 20000, 12, true)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    peer_link_errors,
    LIMIT,
    multi::peer_link_errors(gpu)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    link_limit,
    LIMIT,
    multi::link_limit(gpu)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    close_beside_resident,
    LIMIT,
    multi::close_beside_resident(gpu)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    peer_copies,
    LIMIT,
    multi::peer_copies(gpu)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    nccl_all_reduce,
    LIMIT,
    multi::nccl_all_reduce(gpu)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    events_across_devices,
    LIMIT,
    multi::events_across_devices(gpu)
);
isolated_test!(
    #[ignore = "needs two CUDA GPUs"]
    link_flush_and_owner_close,
    LIMIT,
    multi::link_flush_and_owner_close(gpu)
);
