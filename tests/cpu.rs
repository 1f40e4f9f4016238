//! The runtime on the CPU backend: the same queue protocol and device code as on the
//! GPU, run by worker threads. These run in CI.

mod common;
mod elements;

use resident::{Runtime, RuntimeConfig};
use std::time::Duration;

fn cpu(capacity: u32) -> Runtime {
    Runtime::with_config(RuntimeConfig { capacity, cpu_workers: 4, ..RuntimeConfig::cpu() }).unwrap()
}

#[test]
fn batch_options() {
    common::batch_options(&cpu(1 << 12));
}

#[test]
fn exactly_once_many_producers() {
    common::exactly_once_many_producers(&cpu(1 << 12), 8, 5_000, 250);
}

#[test]
fn streamed_batches_many_producers() {
    common::streamed_batches_many_producers(&cpu(1 << 12), 6, 20_000, 16);
}

#[test]
fn axpy_matches_reference() {
    common::axpy_matches_reference(&cpu(1 << 10), 512, 1024);
}

#[test]
fn axpy_odd_shapes() {
    common::axpy_odd_shapes(&cpu(1 << 10));
}

#[test]
fn invalid_tasks_rejected() {
    common::invalid_tasks_rejected(&cpu(1 << 10));
}

#[test]
fn shutdown_drains_queued_tasks() {
    common::shutdown_drains_queued_tasks(cpu(1 << 10), Duration::from_millis(2), 100);
}

#[test]
fn shutdown_aborts_after_timeout() {
    let rt = Runtime::with_config(RuntimeConfig { cpu_workers: 4, shutdown_timeout: Duration::from_millis(200), ..RuntimeConfig::cpu() })
        .unwrap();
    common::shutdown_aborts_after_timeout(rt, 4);
}

#[test]
fn close_while_producers_submit() {
    common::close_while_producers_submit(&cpu(1 << 8), 6);
}

#[test]
fn queue_full_backpressure() {
    common::queue_full_backpressure(&cpu(64), Duration::from_millis(1));
}

#[test]
fn wait_timeout_expires() {
    common::wait_timeout_expires(&cpu(64));
}

#[test]
fn batch_larger_than_ring() {
    common::batch_larger_than_ring(&cpu(256));
}

#[test]
fn auto_backend_picks_cpu_without_a_gpu() {
    if resident::cuda_available() {
        return; // On a GPU machine Auto picks CUDA; tests/gpu.rs covers that.
    }
    let rt = Runtime::new().unwrap();
    assert_eq!(rt.backend().kind, resident::BackendKind::Cpu);
    assert!(matches!(
        Runtime::with_config(RuntimeConfig::cuda()),
        Err(resident::Error::NoDriver | resident::Error::NoDevice | resident::Error::PtxUnavailable(_))
    ));
}

#[test]
fn resident_list_replays() {
    common::resident_list_replays(&cpu(1 << 10), 3000, 256);
}

#[test]
fn list_chunks_exactly_once() {
    for per_slot in [0, 1, 3, 32] {
        let rt = Runtime::with_config(RuntimeConfig {
            capacity: 1 << 12,
            segment_tasks: 64,
            cpu_workers: 4,
            list_slot_tasks: per_slot,
            ..RuntimeConfig::cpu()
        })
        .unwrap();
        common::list_chunks_exactly_once(&rt, 300, 3);
    }
    // An image built without list chunks (`KernelBuild::list_chunks(false)`): its lists
    // take a slot per task, whatever the configuration asks.
    let builtin = resident::KernelImage::builtin();
    let image = resident::KernelImage::__from_build::<resident_device::Builtins>(resident::__ImageParts {
        name: "no_list_chunks",
        ptx: "",
        block_threads: builtin.block_threads(),
        max_registers: builtin.max_registers(),
        scratch_bytes_per_warp: 0,
        list_chunks: false,
        kernels: &[],
    });
    let slots = |rt: &Runtime| {
        let before = rt.metrics().submitted;
        let list = rt.upload_tasks(&vec![resident::Task::noop(0); 300]).unwrap();
        list.submit().unwrap().wait().unwrap();
        rt.metrics().submitted - before
    };
    let rt = Runtime::with_config(RuntimeConfig { image, cpu_workers: 4, list_slot_tasks: 8, ..RuntimeConfig::cpu() }).unwrap();
    common::list_chunks_exactly_once(&rt, 300, 2);
    assert_eq!(slots(&rt), 300);
    let rt = Runtime::with_config(RuntimeConfig { cpu_workers: 4, list_slot_tasks: 8, ..RuntimeConfig::cpu() }).unwrap();
    assert_eq!(slots(&rt), 38);
}

#[test]
fn list_runs_interleaved() {
    let rt = Runtime::with_config(RuntimeConfig {
        capacity: 1 << 12,
        segment_tasks: 64,
        list_chunk: 64,
        cpu_workers: 4,
        ..RuntimeConfig::cpu()
    })
    .unwrap();
    common::list_runs_interleaved(&rt, 10);
}

#[test]
fn worker_policies_exactly_once() {
    use resident::worker_flags::{PRECLAIM, RELEASE_COUNT, SPARSE_LOOK};
    for flags in [0, PRECLAIM, PRECLAIM | RELEASE_COUNT, PRECLAIM | SPARSE_LOOK, PRECLAIM | RELEASE_COUNT | SPARSE_LOOK] {
        let rt =
            Runtime::with_config(RuntimeConfig { worker_flags: flags, capacity: 1 << 10, cpu_workers: 4, ..RuntimeConfig::cpu() }).unwrap();
        common::exactly_once_many_producers(&rt, 4, 2_000, 200);
        common::tree_children_exactly_once(&rt, 16, 3, 4, 2);
        common::invalid_tasks_rejected(&rt);
    }
}

// Small completion segments: more counters, more records; the same exactly-once.
#[test]
fn small_segments_exactly_once() {
    for segment_tasks in [32, 64] {
        let rt = Runtime::with_config(RuntimeConfig { segment_tasks, capacity: 1 << 10, cpu_workers: 4, ..RuntimeConfig::cpu() }).unwrap();
        common::exactly_once_many_producers(&rt, 4, 2_000, 200);
        common::tree_children_exactly_once(&rt, 16, 3, 4, 2);
        common::invalid_tasks_rejected(&rt);
        common::resident_list_replays(&rt, 500, 64);
    }
    let bad = RuntimeConfig { segment_tasks: 48, ..RuntimeConfig::cpu() };
    assert!(matches!(Runtime::with_config(bad), Err(resident::Error::Config(_))));
}

// Helpers that stay awake after a large batch's pass (forced on here: the CPU backend
// leaves it off by default) take the next batch as before; an extreme linger is a
// typed refusal, not an overflow.
#[test]
fn lingering_helpers_and_extreme_spin() {
    let rt = Runtime::with_config(RuntimeConfig {
        capacity: 1 << 14,
        submit_threads: 3,
        submit_spin: Some(Duration::from_millis(5)),
        ..RuntimeConfig::cpu()
    })
    .unwrap();
    common::large_batches_exactly_once_or_refused(&rt, 20_000, 4, true);
    drop(rt);
    for spin in [Duration::from_secs(2), Duration::MAX] {
        let bad = RuntimeConfig { submit_spin: Some(spin), ..RuntimeConfig::cpu() };
        assert!(matches!(Runtime::with_config(bad), Err(resident::Error::Config(_))), "{spin:?}");
    }
}

#[test]
fn device_rejects_forged_tasks() {
    common::device_rejects_forged_tasks(&cpu(1 << 10));
}

#[test]
fn dependencies_order_stages() {
    common::dependencies_order_stages(&cpu(1 << 12), 64, 256);
}

#[test]
fn tree_children_exactly_once() {
    common::tree_children_exactly_once(&cpu(1 << 10), 64, 4, 4, 4);
}

#[test]
fn irregular_trees_exactly_once() {
    common::irregular_trees_exactly_once(&cpu(1 << 10), 8, 4, 8);
}

#[test]
fn spawn_ring_full_is_reported() {
    let rt = Runtime::with_config(RuntimeConfig { cpu_workers: 1, spawn_capacity: 2, ..RuntimeConfig::cpu() }).unwrap();
    common::spawn_ring_full_is_reported(&rt);
}

#[test]
fn shutdown_drains_children() {
    common::shutdown_drains_children(cpu(1 << 10), 16, 4, 4);
}

#[test]
fn spawn_ring_small_never_loses_a_child() {
    let rt = Runtime::with_config(RuntimeConfig { cpu_workers: 4, spawn_capacity: 8, ..RuntimeConfig::cpu() }).unwrap();
    common::spawn_ring_small_never_loses_a_child(&rt, 64, 3, 8);
}

#[test]
fn async_tickets() {
    common::async_tickets(&cpu(1 << 12), 200, 16);
}

#[test]
fn async_ticket_resolved_by_shutdown() {
    let rt = Runtime::with_config(RuntimeConfig { cpu_workers: 2, shutdown_timeout: Duration::from_millis(100), ..RuntimeConfig::cpu() })
        .unwrap();
    common::async_ticket_resolved_by_shutdown(rt);
}

#[test]
fn reservations_exactly_once() {
    common::reservations_exactly_once(&cpu(1 << 12), 4, 20_000);
}

#[test]
fn many_futures_one_ticket() {
    common::many_futures_one_ticket(&cpu(1 << 12));
}

#[test]
fn large_batches_exactly_once_or_refused() {
    // Larger than half the ring, and at most half of it.
    // Staged on several threads, checked as staged (its numbers spent when refused),
    // larger than the ring and not; a smaller batch, checked before its reservation.
    common::large_batches_exactly_once_or_refused(&cpu(1 << 14), 20_000, 6, true);
    common::large_batches_exactly_once_or_refused(&cpu(1 << 16), 20_000, 6, true);
    common::large_batches_exactly_once_or_refused(&cpu(1 << 14), 3_000, 6, false);
}

#[test]
fn halved_batches_exactly_once_or_refused() {
    // Mid-size batches in halves on partner threads (the CPU backend has none by
    // default; these spin 2 ms after each job, so that most batches find one awake),
    // and without partners: the same outcomes.
    for partners in [Some(2), Some(0)] {
        let config = RuntimeConfig {
            capacity: 1 << 14,
            submit_partners: partners,
            submit_spin: Some(Duration::from_millis(2)),
            ..RuntimeConfig::cpu()
        };
        let rt = Runtime::with_config(config).unwrap();
        common::halved_batches_exactly_once_or_refused(&rt, 3, 12);
        // A refused batch takes no sequence numbers (checked before its reservation).
        common::large_batches_exactly_once_or_refused(&rt, 3_000, 4, false);
    }
}

#[test]
fn compact_and_full_runs_exactly_once() {
    // The CPU backend has no host ring: every run in full, the same results.
    let rt = Runtime::with_config(RuntimeConfig { capacity: 1 << 14, ..RuntimeConfig::cpu() }).unwrap();
    common::compact_and_full_runs_exactly_once(&rt, 3, 2);
    assert_eq!(rt.metrics().compact_tasks, 0);
}

#[test]
fn compact_runs_beside_next_lap_writers() {
    let rt = Runtime::with_config(RuntimeConfig { capacity: 1024, segment_tasks: 32, ..RuntimeConfig::cpu() }).unwrap();
    common::compact_runs_beside_next_lap_writers(&rt, 3, 10);
}

#[test]
fn pipelined_batches_exactly_once_or_partly() {
    let rt = Runtime::with_config(RuntimeConfig { capacity: 1 << 14, ..RuntimeConfig::cpu() }).unwrap();
    common::pipelined_batches_exactly_once_or_partly(&rt, 3, 4);
}

#[test]
fn large_unchecked_batches_exactly_once() {
    // Larger than the ring and not; on 4 helpers and on the caller alone.
    for (capacity, threads) in [(1 << 14, 4), (1 << 16, 1)] {
        let rt = Runtime::with_config(RuntimeConfig { capacity, submit_threads: threads, ..RuntimeConfig::cpu() }).unwrap();
        common::large_unchecked_batches_exactly_once(&rt, 3, 3);
    }
}

#[test]
fn large_batches_beside_drops() {
    // Rings smaller than a batch and not; helper pools of 2, 3 and 8 threads.
    for (capacity, submit_threads) in [(1u32 << 13, 2usize), (1 << 14, 3), (1 << 12, 8)] {
        let rt = Runtime::with_config(RuntimeConfig { capacity, cpu_workers: 2, submit_threads, ..RuntimeConfig::cpu() }).unwrap();
        common::large_batches_beside_drops(&rt);
        rt.close().unwrap();
    }
}

#[test]
fn large_batch_signal_releases_a_waiter() {
    common::large_batch_signal_releases_a_waiter(&cpu(1 << 14));
}

#[test]
fn mixed_batch_sizes_exactly_once() {
    common::mixed_batch_sizes_exactly_once(&cpu(1 << 12), 4, 20_000);
}

#[test]
fn express_tasks() {
    common::express_tasks(&cpu(1 << 12), 4, 2_000);
}

#[test]
fn buffers_outlive_runtime() {
    common::buffers_outlive_runtime(|| cpu(1 << 10));
}

// Reliability (docs/reliability.md): faults, hangs, bounded shutdown, typed refusals.

fn cpu_with(f: impl FnOnce(&mut RuntimeConfig)) -> Runtime {
    let mut c = RuntimeConfig { capacity: 1 << 10, cpu_workers: 4, shutdown_timeout: Duration::from_millis(300), ..RuntimeConfig::cpu() };
    f(&mut c);
    Runtime::with_config(c).unwrap()
}

#[test]
fn fault_trap_resolves_every_ticket_and_a_new_runtime_works() {
    common::faults::device_fault_recovers(
        || Ok(cpu_with(|_| {})),
        common::faults::Fault::Trap,
        Duration::from_secs(10),
        common::faults::Afterwards::Works,
    );
}

#[test]
fn fault_illegal_address_resolves_every_ticket_and_a_new_runtime_works() {
    common::faults::device_fault_recovers(
        || Ok(cpu_with(|_| {})),
        common::faults::Fault::IllegalAddress(8),
        Duration::from_secs(10),
        common::faults::Afterwards::Works,
    );
}

// A CPU worker's panic (a trap, a modelled illegal address; a user
// task's `run` that panics takes the same path) is named `DeviceFault` to every
// waiter, producer and later call, never `TaskFailed { Aborted }` or `ShutDown`.

#[test]
fn fault_names_itself_to_aborted_tasks() {
    for fault in [common::faults::Fault::Trap, common::faults::Fault::IllegalAddress(8)] {
        common::faults::fault_names_itself_to_aborted_tasks(cpu_with(|c| c.cpu_workers = 6), fault, Duration::from_secs(10));
    }
}

#[test]
fn fault_names_itself_to_async_waiters() {
    common::faults::fault_names_itself_to_async_waiters(cpu_with(|_| {}), common::faults::Fault::Trap, Duration::from_secs(10));
}

#[test]
fn close_after_an_unseen_fault_names_it() {
    common::faults::close_after_an_unseen_fault_names_it(cpu_with(|_| {}), common::faults::Fault::Trap);
}

#[test]
fn read_after_an_unseen_fault_names_it() {
    common::faults::read_after_an_unseen_fault_names_it(cpu_with(|_| {}), common::faults::Fault::Trap);
}

#[test]
fn producers_during_a_fault_get_the_fault() {
    for fault in [common::faults::Fault::Trap, common::faults::Fault::IllegalAddress(8)] {
        common::faults::producers_during_a_fault_get_the_fault(cpu_with(|c| c.cpu_workers = 4), fault, 6);
    }
}

#[test]
fn producers_racing_a_fault_get_the_fault() {
    common::faults::producers_racing_a_fault_get_the_fault(|| cpu_with(|_| {}), common::faults::Fault::Trap, 20, 6);
}

#[test]
fn fault_hang_watchdog_fires() {
    let d = Duration::from_millis(300);
    common::faults::watchdog_ends_hung_task(|| cpu_with(|c| c.task_deadline = Some(d)), d);
}

#[test]
fn watchdog_spares_progressing_work() {
    let d = Duration::from_millis(300);
    common::faults::watchdog_spares_progressing_work(&cpu_with(|c| c.task_deadline = Some(d)), d, Duration::from_millis(5));
}

#[test]
fn drop_with_hung_tasks_is_bounded() {
    common::faults::drop_with_hung_tasks_is_bounded(cpu_with(|_| {}), 4, Duration::from_millis(300));
}

#[test]
fn drop_drains_short_tasks() {
    common::faults::drop_drains_short_tasks(cpu_with(|c| c.shutdown_timeout = Duration::from_secs(30)), 200);
}

#[test]
fn close_with_stuck_producer_is_bounded() {
    common::faults::close_with_stuck_producer_is_bounded(cpu_with(|c| c.capacity = 64), Duration::from_millis(300));
}

#[test]
fn typed_errors_for_refusals() {
    common::faults::typed_errors_for_refusals(cpu_with(|_| {}));
}

#[test]
fn raw_axpy_through_unsafe_api() {
    common::faults::raw_axpy_through_unsafe_api(&cpu_with(|_| {}));
}

#[test]
fn any_pod_elements() {
    elements::any_pod_elements(&cpu(1 << 10));
}

#[test]
fn many_buffers_and_counters() {
    // Past the old cap of 4096 of each; the tables hold every 16-bit id.
    elements::many_buffers_and_counters(&cpu(1 << 10), 10_000);
    // The buffer table's own limit is a typed error, not a crash.
    let rt = cpu(1 << 10);
    let held: Vec<_> = (0..resident_shared::MAX_BUFFERS).map_while(|_| rt.buffer::<u8>(1).ok()).collect();
    assert_eq!(held.len(), resident_shared::MAX_BUFFERS);
    assert!(matches!(rt.buffer::<u8>(1), Err(resident::Error::TooManyBuffers(_))));
}
