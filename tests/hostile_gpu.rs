//! Hostile and careless use of the public API on a CUDA GPU (the scenarios are in
//! `common/hostile.rs`, shared with `hostile_cpu.rs`). Each runs in a child process
//! under a time limit. On a GPU:
//!
//!     <hostile_gpu test binary> --include-ignored --test-threads=1
//!
//! Without a GPU these fail: `RuntimeConfig::cuda()` refuses to start.

mod common;

use common::hostile::{self, Make};
use resident::{Runtime, RuntimeConfig};
use std::time::Duration;

/// The foreign runtime beside a GPU one is a CPU runtime: one runtime per CUDA device
/// in a process (`second_runtime_on_one_device`).
const GPU: Make = Make {
    base: || RuntimeConfig { capacity: 1 << 12, shutdown_timeout: Duration::from_secs(2), ..RuntimeConfig::cuda() },
    other: || RuntimeConfig { capacity: 1 << 10, cpu_workers: 2, shutdown_timeout: Duration::from_secs(2), ..RuntimeConfig::cpu() },
};

const LIMIT: Duration = Duration::from_secs(120);

isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    foreign_task_list,
    LIMIT,
    hostile::foreign_task_list(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    second_runtime_on_one_device,
    LIMIT,
    hostile::second_runtime_on_one_device(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    foreign_buffer_refused,
    LIMIT,
    hostile::foreign_buffer_refused(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    foreign_counter_refused,
    LIMIT,
    hostile::foreign_counter_refused(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    stale_handle_never_aliases,
    LIMIT * 2,
    hostile::stale_handle_never_aliases(GPU, 70_000)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    timeouts_at_extremes,
    LIMIT,
    hostile::timeouts_at_extremes(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    config_extremes,
    LIMIT * 2,
    hostile::config_extremes(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    ranges_and_sizes_at_extremes,
    LIMIT,
    hostile::ranges_and_sizes_at_extremes(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    try_submit_larger_than_ring,
    LIMIT,
    hostile::try_submit_larger_than_ring(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    many_waiters_one_ticket,
    LIMIT,
    hostile::many_waiters_one_ticket(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    close_races_close,
    LIMIT,
    hostile::close_races_close(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    construction_failure_cleans_up,
    LIMIT,
    hostile::construction_failure_cleans_up(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    list_rechecked_each_submit,
    LIMIT,
    hostile::list_rechecked_each_submit(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    nothing_after_close,
    LIMIT,
    hostile::nothing_after_close(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    waiting_task_does_not_wedge,
    LIMIT,
    hostile::waiting_task_does_not_wedge(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    read_waits_for_writers,
    LIMIT,
    hostile::read_waits_for_writers(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    cancel_ends_waiting_and_polling_tasks,
    LIMIT,
    hostile::cancel_ends_waiting_and_polling_tasks(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    drops_never_wait,
    LIMIT,
    hostile::drops_never_wait(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    large_trees_complete,
    LIMIT,
    hostile::large_trees_complete(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    try_submit_never_blocks,
    LIMIT,
    hostile::try_submit_never_blocks(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    large_batches_do_not_hold_the_helpers,
    LIMIT,
    hostile::large_batches_do_not_hold_the_helpers(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    open_reservation_waits_refused,
    LIMIT,
    hostile::open_reservation_waits_refused(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    reads_after_a_fault_answer_it,
    LIMIT,
    hostile::reads_after_a_fault_answer_it(GPU)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    stale_counter_never_aliases,
    LIMIT * 2,
    hostile::stale_counter_never_aliases(GPU, 70_000)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    image_of_other_shared_sources_refused,
    LIMIT,
    image_of_other_shared_sources()
);

/// A kernel image built from other sources of the shared types than the host (a stale
/// build: two checkouts sharing one target directory) is refused when it loads, with a
/// `Config` error that says so; nothing runs under mismatched layouts. The real image
/// then starts and serves.
fn image_of_other_shared_sources() {
    use resident::{Error, KernelImage, Task};
    let builtin = KernelImage::builtin();
    let ptx = builtin.ptx();
    let at = ptx.find("RESIDENT_SHARED_SOURCES[8] = {").expect("the fingerprint global") + "RESIDENT_SHARED_SOURCES[8] = {".len();
    let end = at + ptx[at..].find(',').unwrap();
    let first: u8 = ptx[at..end].trim().parse().unwrap();
    let stale: &'static str = format!("{}{}{}", &ptx[..at], first.wrapping_add(1), &ptx[end..]).leak();
    let image = KernelImage::__from_build::<resident_device::Builtins>(resident::__ImageParts {
        name: "stale",
        ptx: stale,
        block_threads: builtin.block_threads(),
        max_registers: builtin.max_registers(),
        scratch_bytes_per_warp: builtin.scratch_bytes_per_warp(),
        list_chunks: true,
        kernels: &[],
    });
    match Runtime::with_config(RuntimeConfig { image, ..(GPU.base)() }) {
        Err(Error::Config(m)) => assert!(m.contains("resident-shared"), "{m}"),
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("a runtime started on an image of other shared sources"),
    }
    let rt = Runtime::with_config((GPU.base)()).unwrap();
    rt.submit(&[Task::noop(1)]).unwrap().wait().unwrap();
    rt.close().unwrap();
}
