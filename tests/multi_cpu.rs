//! Several runtimes in one process and links between them on the CPU
//! backend: CPU runtimes labelled with device ordinals stand in for devices (the
//! scenarios are in `common/multi.rs`; `multi_gpu.rs` runs them on real GPUs). Each runs
//! in a child process under a time limit.

mod common;

use common::multi;
use resident::RuntimeConfig;
use std::time::Duration;

fn cpu(device: usize) -> RuntimeConfig {
    RuntimeConfig { device, capacity: 1 << 12, cpu_workers: 2, shutdown_timeout: Duration::from_secs(2), ..RuntimeConfig::cpu() }
}

const LIMIT: Duration = Duration::from_secs(120);

isolated_test!(runtimes_per_device, LIMIT, multi::runtimes_per_device(cpu, 3));
isolated_test!(foreign_handles, LIMIT, multi::foreign_handles(cpu));
isolated_test!(links_exactly_once, LIMIT, multi::links_exactly_once(cpu, 3000, 9, true));
isolated_test!(
    #[ignore = "long"]
    links_exactly_once_long,
    LIMIT,
    multi::links_exactly_once(|d| RuntimeConfig { cpu_workers: 8, ..cpu(d) }, 20000, 12, true)
);
isolated_test!(link_errors, LIMIT, multi::link_errors(cpu));
isolated_test!(peer_link_refused, LIMIT, multi::peer_link_refused(cpu));
isolated_test!(link_limit, LIMIT, multi::link_limit(cpu));
isolated_test!(close_beside_resident, LIMIT, multi::close_beside_resident(cpu));
isolated_test!(peer_copies, LIMIT, multi::peer_copies(cpu));
isolated_test!(nccl_all_reduce, LIMIT, multi::nccl_all_reduce(cpu));
isolated_test!(events_across_devices, LIMIT, multi::events_across_devices(cpu));
isolated_test!(link_flush_and_owner_close, LIMIT, multi::link_flush_and_owner_close(cpu));
