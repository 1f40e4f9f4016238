//! The runtime on a CUDA GPU. Ignored by default (CI has no GPU); run on a GPU with
//! `cargo test --release --test gpu -- --include-ignored`, or staged by `tools/gpu/pack.sh`
//! and run by `tools/gpu/suites.sh` on a GPU machine without Rust.
//! Without a GPU these tests fail: `RuntimeConfig::cuda()` refuses to start.
//!
//! One persistent kernel fills the GPU, so the tests take turns (`GPU` lock).

mod common;
mod elements;
#[macro_use]
mod gpu_turns;

#[path = "../benches/common/baselines.rs"]
mod baselines;
use baselines::Baselines;
use resident::{Runtime, RuntimeConfig, Task};
use std::time::Duration;

fn gpu(capacity: u32) -> Runtime {
    let rt = Runtime::with_config(RuntimeConfig { capacity, ..RuntimeConfig::cuda() }).expect("a CUDA GPU");
    eprintln!("{}", rt.backend());
    rt
}

gpu_test!(exactly_once_1m_tasks_8_producers, common::exactly_once_many_producers(&gpu(1 << 16), 8, 125_000, 5_000));
gpu_test!(streamed_batches_8_producers, common::streamed_batches_many_producers(&gpu(1 << 16), 8, 4_000, 256));
gpu_test!(axpy_1m_tasks_matches_reference, common::axpy_matches_reference(&gpu(1 << 18), 1_000_000, 64));
gpu_test!(axpy_20k_tasks_of_1024_matches_reference, common::axpy_matches_reference(&gpu(1 << 18), 20_000, 1024));
gpu_test!(axpy_odd_shapes, common::axpy_odd_shapes(&gpu(1 << 10)));
gpu_test!(batch_options, common::batch_options(&gpu(1 << 14)));
gpu_test!(invalid_tasks_rejected, common::invalid_tasks_rejected(&gpu(1 << 10)));
gpu_test!(shutdown_drains_queued_tasks, common::shutdown_drains_queued_tasks(gpu(1 << 12), Duration::from_millis(2), 3000));
gpu_test!(shutdown_aborts_after_timeout, {
    let rt = Runtime::with_config(RuntimeConfig { shutdown_timeout: Duration::from_millis(300), ..RuntimeConfig::cuda() }).unwrap();
    let workers = rt.backend().workers as usize;
    common::shutdown_aborts_after_timeout(rt, workers);
});
gpu_test!(close_while_producers_submit, common::close_while_producers_submit(&gpu(1 << 10), 6));
gpu_test!(queue_full_backpressure, common::queue_full_backpressure(&gpu(64), Duration::from_millis(20)));
gpu_test!(wait_timeout_expires, common::wait_timeout_expires(&gpu(64)));
gpu_test!(batch_larger_than_ring, common::batch_larger_than_ring(&gpu(256)));

gpu_test!(claim_sizes_1_and_32_exactly_once, {
    for claim in [1, 32] {
        let rt = Runtime::with_config(RuntimeConfig { claim, capacity: 1 << 14, ..RuntimeConfig::cuda() }).unwrap();
        common::exactly_once_many_producers(&rt, 4, 50_000, 3_000);
    }
});

// The baselines compute the same thing as the persistent runtime (the benchmark
// compares like with like).
gpu_test!(baselines_match_persistent_results, {
    let rt = gpu(1 << 16);
    let (tasks, slice) = (2_000, 1024);
    let xs: Vec<f32> = (0..tasks * slice).map(|i| ((i * 7919) % 1000) as f32 / 1000.0 + 0.1).collect();
    let x = rt.buffer_from(&xs).unwrap();
    let list = |y: &resident::Buffer<f32>| -> Vec<Task> {
        (0..tasks).map(|i| Task::axpy(2.0, x.slice(i * slice..(i + 1) * slice), y.slice(i * slice..(i + 1) * slice))).collect()
    };
    let y1 = rt.buffer::<f32>(tasks * slice).unwrap();
    rt.submit(&list(&y1)).unwrap().wait().unwrap();
    // The baselines run with the persistent kernel stopped, as in the benches: under
    // compute-sanitizer a launch beside it never started.
    let (y2, y3) = (rt.buffer::<f32>(tasks * slice).unwrap(), rt.buffer::<f32>(tasks * slice).unwrap());
    // Made before `close`: a closed runtime makes no new buffers (`ShutDown`).
    let y5 = rt.buffer::<f32>(tasks * slice).unwrap();
    let y6 = rt.buffer::<f32>(tasks * slice).unwrap();
    let (y7, y8) = (rt.buffer::<f32>(tasks * slice).unwrap(), rt.buffer::<f32>(tasks * slice).unwrap());
    rt.close().unwrap();
    let base = Baselines::new(&rt, tasks).unwrap();
    base.launch_per_task(&base.prepare(&rt, &list(&y2)).unwrap(), false).unwrap();
    assert!(base.completions(tasks).unwrap().iter().all(|c| c.status == 0 && c.result == slice as u64));
    // The graph runs once as it is captured (capture_graph's warm-up replay).
    let g = base.capture_graph(&base.prepare(&rt, &list(&y3)).unwrap(), false).unwrap();
    let want: Vec<f32> = xs.iter().map(|v| 2.0 * v).collect();
    for y in [&y1, &y2, &y3] {
        assert_eq!(y.read().unwrap(), want);
    }
    base.replay(&g).unwrap();
    assert_eq!(y3.read().unwrap(), xs.iter().map(|v| 4.0 * v).collect::<Vec<_>>());
    // The same launches with programmatic dependent launch, and their graph: the tasks
    // are independent, so the results are the same.
    base.launch_per_task(&base.prepare(&rt, &list(&y5)).unwrap(), true).unwrap();
    let gp = base.capture_graph(&base.prepare(&rt, &list(&y6)).unwrap(), true).unwrap();
    assert_eq!(y5.read().unwrap(), want);
    assert_eq!(y6.read().unwrap(), want);
    drop(gp);
    // One launch over the task table, from device memory and fed from the host: every
    // task once (twice for the one run twice).
    let t7 = base.table(&rt, &list(&y7)).unwrap();
    base.run_table(&t7).unwrap();
    assert_eq!(y7.read().unwrap(), want);
    base.run_table(&t7).unwrap();
    assert_eq!(y7.read().unwrap(), xs.iter().map(|v| 4.0 * v).collect::<Vec<_>>());
    let mut t8 = base.table(&rt, &list(&y8)).unwrap();
    base.host_fed_table(&mut t8).unwrap();
    assert_eq!(y8.read().unwrap(), want);
    assert_eq!(t8.len(), tasks);
    // The flat launch of the task loop (the dispatch bench's ceiling), on random y.
    let ys: Vec<f32> = (0..tasks * slice).map(|i| ((i * 104_729) % 997) as f32 / 997.0 - 0.5).collect();
    y1.write(&ys).unwrap();
    let y4 = &y1;
    base.axpy_flat(2.0, &x, y4, slice).unwrap();
    let got = y4.read().unwrap();
    let worst = got.iter().zip(xs.iter().zip(&ys)).map(|(g, (x, y))| (*g as f64 - (2.0 * *x as f64 + *y as f64)).abs()).fold(0.0, f64::max);
    assert!(worst <= 1e-6, "axpy_flat: max abs error {worst:e} against the f64 reference");
    assert!(base.axpy_flat(2.0, &x, y4, slice + 1).is_err(), "a slice that does not divide the length is refused");
});

// The spawn bench's rivals mark every node of a tree once, as the `tree` task does:
// one launch per level of a full tree, and levels grown on the device whose counts the
// host reads back (full and irregular trees), run after run.
gpu_test!(tree_rivals_mark_each_node_once, tree_rivals(gpu(1 << 10)));

fn tree_rivals(rt: Runtime) {
    let shapes = [(3u32, 16u32, false), (6, 4, false), (4, 16, true)];
    // Made before `close`: a closed runtime makes no new buffers.
    let marks: Vec<_> = shapes.iter().map(|&(d, f, _)| rt.buffer::<u32>(Task::tree_nodes(d, f).unwrap() as usize).unwrap()).collect();
    rt.close().unwrap();
    let base = Baselines::new(&rt, 1).unwrap();
    let mut scratch = base.tree_scratch(16usize.pow(4), 6).unwrap();
    for (&(depth, fanout, irregular), marks) in shapes.iter().zip(&marks) {
        let what = format!("depth {depth}, fanout {fanout}, irregular {irregular}");
        let mut want = vec![u32::from(!irregular); marks.len()];
        if irregular {
            resident::builtin::visit_irregular_tree(0, depth, fanout, &mut |n, _| want[n as usize] = 1);
        }
        let nodes: u32 = want.iter().sum();
        if !irregular {
            base.tree_by_levels(marks, depth, fanout).unwrap();
            assert_eq!(marks.read().unwrap(), want, "levels, {what}: every node once");
            marks.write(&vec![0; marks.len()]).unwrap();
        }
        for run in 1..=2 {
            assert_eq!(base.tree_read_back(&mut scratch, marks, depth, fanout, irregular).unwrap(), nodes, "read-back, {what}: nodes");
            let got = marks.read().unwrap();
            assert!(got.iter().zip(&want).all(|(g, w)| *g == w * run), "read-back, {what}: every node of the tree {run} times, no other");
        }
    }
    // A level wider than the scratch is refused (its ids past the scratch unwritten).
    let mut narrow = base.tree_scratch(15, 3).unwrap();
    assert!(base.tree_read_back(&mut narrow, &marks[0], 3, 16, false).is_err());
}

gpu_test!(auto_backend_picks_cuda, {
    let rt = Runtime::new().unwrap();
    assert_eq!(rt.backend().kind, resident::BackendKind::Cuda);
});

gpu_test!(resident_list_replays, common::resident_list_replays(&gpu(1 << 16), 20_000, 1024));

// List chunks at the automatic size, a slot per task, and 3 and 32 tasks a slot.
gpu_test!(list_chunks_exactly_once, {
    for per_slot in [0, 1, 3, 32] {
        let rt = Runtime::with_config(RuntimeConfig { capacity: 1 << 16, list_slot_tasks: per_slot, ..RuntimeConfig::cuda() }).unwrap();
        common::list_chunks_exactly_once(&rt, 20_000, 5);
    }
});
// List runs: the run table reused hundreds of times under lists cut into 64-task runs
// and host-fed batches between them.
gpu_test!(list_runs_interleaved, {
    let rt = Runtime::with_config(RuntimeConfig { capacity: 1 << 12, segment_tasks: 64, list_chunk: 64, ..RuntimeConfig::cuda() }).unwrap();
    common::list_runs_interleaved(&rt, 40);
});

gpu_test!(worker_policies_exactly_once, {
    use resident::worker_flags::{PRECLAIM, RELEASE_COUNT, SPARSE_LOOK};
    for flags in [0, PRECLAIM, PRECLAIM | RELEASE_COUNT, PRECLAIM | SPARSE_LOOK, PRECLAIM | RELEASE_COUNT | SPARSE_LOOK] {
        for claim in [1, 8] {
            let rt =
                Runtime::with_config(RuntimeConfig { claim, worker_flags: flags, capacity: 1 << 14, ..RuntimeConfig::cuda() }).unwrap();
            common::exactly_once_many_producers(&rt, 4, 25_000, 2_500);
            common::resident_list_replays(&rt, 2_000, 256);
            // Children are counted in their parents' segments (the finisher reads
            // `first` through the count's acquire), and failures in the count itself.
            common::tree_children_exactly_once(&rt, 64, 3, 4, 2);
            common::invalid_tasks_rejected(&rt);
        }
    }
});

// Small completion segments: more counters, more records; the same exactly-once.
gpu_test!(small_segments_exactly_once, {
    for segment_tasks in [32, 256] {
        let rt = Runtime::with_config(RuntimeConfig { segment_tasks, capacity: 1 << 14, ..RuntimeConfig::cuda() }).unwrap();
        common::exactly_once_many_producers(&rt, 4, 25_000, 2_500);
        common::resident_list_replays(&rt, 2_000, 256);
        common::tree_children_exactly_once(&rt, 64, 3, 4, 2);
        common::invalid_tasks_rejected(&rt);
    }
});

// Asking for more blocks than fit leaves one block slot per SM free, so the runtime's
// own memsets (zeroing a new buffer) still run beside the persistent kernel.
gpu_test!(full_occupancy_request_leaves_room, {
    let rt = Runtime::with_config(RuntimeConfig { max_blocks_per_sm: 64, ..RuntimeConfig::cuda() }).unwrap();
    eprintln!("{}", rt.backend());
    common::axpy_matches_reference(&rt, 1_000, 1024);
});

gpu_test!(device_rejects_forged_tasks, common::device_rejects_forged_tasks(&gpu(1 << 10)));

gpu_test!(dependencies_order_stages, common::dependencies_order_stages(&gpu(1 << 16), 4_000, 1024));

// 1024 trees of 1365 nodes: 1.4 million tasks grown on the device from 1024 roots. The
// spawn ring is a FIFO, so trees grow breadth-first: 16 roots in flight put up to
// 16 x 1024 leaves in the ring at once (the default ring holds 262,144).
gpu_test!(tree_children_exactly_once, common::tree_children_exactly_once(&gpu(1 << 16), 1024, 5, 4, 4));

// Irregular trees (0 to 16 children a node, by a hash of its number), 3 of them at
// once, 79,014 nodes each (as many in flight at once as the default spawn ring holds:
// wider, and pushers that find it full for 20 ms fail with QueueFull); and one deep
// tree (9 levels of 4: 349,525 nodes).
gpu_test!(irregular_trees_exactly_once, common::irregular_trees_exactly_once(&gpu(1 << 16), 3, 5, 16));

gpu_test!(deep_tree_exactly_once, common::tree_children_exactly_once(&gpu(1 << 16), 1, 9, 4, 1));

gpu_test!(shutdown_drains_children, common::shutdown_drains_children(gpu(1 << 12), 64, 4, 4));

// The spawn ring much smaller than a tree level: pushes race with pops; every push
// that fits runs exactly once, every one that does not fails its task with QueueFull.
gpu_test!(spawn_ring_small_never_loses_a_child, {
    let rt = Runtime::with_config(RuntimeConfig { spawn_capacity: 64, ..RuntimeConfig::cuda() }).unwrap();
    common::spawn_ring_small_never_loses_a_child(&rt, 256, 4, 8);
});

gpu_test!(async_tickets, common::async_tickets(&gpu(1 << 16), 2_000, 64));

gpu_test!(async_ticket_resolved_by_shutdown, {
    let rt = Runtime::with_config(RuntimeConfig { shutdown_timeout: Duration::from_millis(200), ..RuntimeConfig::cuda() }).unwrap();
    common::async_ticket_resolved_by_shutdown(rt);
});

gpu_test!(mixed_batch_sizes_exactly_once, common::mixed_batch_sizes_exactly_once(&gpu(1 << 14), 4, 200_000));

// Every batch by copies on the transfer stream (the publication before the relay's
// runs, kept for comparison).
gpu_test!(mixed_batch_sizes_without_relay, {
    let rt = Runtime::with_config(RuntimeConfig { capacity: 1 << 14, relay_max_batch: 0, relay_publish: false, ..RuntimeConfig::cuda() })
        .unwrap();
    // Which publication the driver allowed (stream writes where it takes them).
    eprintln!("{}", rt.backend().layout);
    common::mixed_batch_sizes_exactly_once(&rt, 4, 50_000);
});

// The same with stream memory operations off: `tail` by copies too (the copy path's
// publication before 2026-11-26; host/driver/memops.rs).
gpu_test!(mixed_batch_sizes_copies_only, {
    let rt = Runtime::with_config(RuntimeConfig {
        capacity: 1 << 14,
        relay_max_batch: 0,
        relay_publish: false,
        stream_memops: false,
        ..RuntimeConfig::cuda()
    })
    .unwrap();
    assert!(rt.backend().layout.contains("tail by copy"), "{}", rt.backend().layout);
    common::mixed_batch_sizes_exactly_once(&rt, 4, 50_000);
});

// Copies for large batches, the relay inline for small ones: the two publishers of
// `tail` handing over.
gpu_test!(mixed_batch_sizes_copy_and_inline, {
    let rt = Runtime::with_config(RuntimeConfig { capacity: 1 << 14, relay_publish: false, ..RuntimeConfig::cuda() }).unwrap();
    common::mixed_batch_sizes_exactly_once(&rt, 4, 50_000);
});

// Every batch as runs over the host ring, none inline; small runs, so that runs wrap
// the ring and reuse the table's entries often.
gpu_test!(mixed_batch_sizes_runs_only, {
    let rt = Runtime::with_config(RuntimeConfig {
        capacity: 1 << 12,
        relay_max_batch: 0,
        publish_chunk: 64,
        segment_tasks: 64,
        ..RuntimeConfig::cuda()
    })
    .unwrap();
    common::mixed_batch_sizes_exactly_once(&rt, 4, 50_000);
});

gpu_test!(reservations_exactly_once, common::reservations_exactly_once(&gpu(1 << 14), 4, 100_000));

// The same over copies (staging written in place, then copied).
gpu_test!(reservations_exactly_once_copies, {
    let rt = Runtime::with_config(RuntimeConfig { capacity: 1 << 14, relay_publish: false, ..RuntimeConfig::cuda() }).unwrap();
    common::reservations_exactly_once(&rt, 4, 50_000);
});

gpu_test!(many_futures_one_ticket, common::many_futures_one_ticket(&gpu(1 << 12)));

gpu_test!(large_batches_exactly_once_or_refused, {
    // Staged on several threads, checked as staged (its numbers spent when refused),
    // larger than the ring and not; a smaller batch, checked before its reservation.
    // (One runtime per device: each is dropped before the next.)
    common::large_batches_exactly_once_or_refused(&gpu(1 << 14), 20_000, 20, true);
    common::large_batches_exactly_once_or_refused(&gpu(1 << 16), 20_000, 20, true);
    common::large_batches_exactly_once_or_refused(&gpu(1 << 14), 3_000, 20, false);
});
// Mid-size batches in halves on two partner threads, as runs over the host ring and on
// the copy path (staged in two parts, one copy), and without partners.
gpu_test!(halved_batches_exactly_once_or_refused, {
    for (partners, relay_publish) in [(Some(2), true), (Some(2), false), (Some(0), true)] {
        let config = RuntimeConfig { capacity: 1 << 14, submit_partners: partners, relay_publish, ..RuntimeConfig::default() };
        let rt = Runtime::with_config(config).unwrap();
        common::halved_batches_exactly_once_or_refused(&rt, 4, 40);
        drop(rt);
    }
});
gpu_test!(large_unchecked_batches_exactly_once, common::large_unchecked_batches_exactly_once(&gpu(1 << 14), 3, 4));
gpu_test!(large_batches_beside_drops, common::large_batches_beside_drops(&gpu(1 << 14)));
gpu_test!(large_batch_signal_releases_a_waiter, common::large_batch_signal_releases_a_waiter(&gpu(1 << 14)));

// Runs of 32-byte records (every task of the run has the form) beside full ones, in
// one batch and between producers; with the form off, the same tasks in full.
gpu_test!(compact_and_full_runs_exactly_once, {
    for (capacity, chunk, compact) in [(1 << 14, 0, true), (1 << 12, 256, true), (1 << 14, 0, false)] {
        let rt = Runtime::with_config(RuntimeConfig { capacity, publish_chunk: chunk, compact_records: compact, ..RuntimeConfig::cuda() })
            .unwrap();
        common::compact_and_full_runs_exactly_once(&rt, 3, 4);
        let c = rt.metrics().compact_tasks;
        eprintln!("capacity {capacity}, publish_chunk {chunk}, compact_records {compact}: {c} tasks compact");
        assert_eq!(c > 0, compact, "compact tasks: {c}");
    }
});

// Compact runs whose slots the next lap reuses as early as the room rule allows
// (a review found that records packed from a run's first slot could be overwritten
// before their tasks read them).
gpu_test!(compact_runs_beside_next_lap_writers, {
    let rt = Runtime::with_config(RuntimeConfig {
        capacity: 1024,
        segment_tasks: 32,
        block_threads: 32,
        max_blocks_per_sm: 1,
        // A lost task stalls the ring (its segment never completes, so no room comes
        // to a producer waiting for it): the watchdog turns that into a fault that
        // every ticket and submit reports, not a hang.
        task_deadline: Some(Duration::from_secs(5)),
        ..RuntimeConfig::cuda()
    })
    .unwrap();
    eprintln!("{}", rt.backend());
    common::compact_runs_beside_next_lap_writers(&rt, 3, 500);
    assert!(rt.metrics().compact_tasks > 0);
});

// Large batches published as their check goes (`Batch::pipelined`), half of them
// refused part way: exactly the reported prefix ran.
gpu_test!(pipelined_batches_exactly_once_or_partly, common::pipelined_batches_exactly_once_or_partly(&gpu(1 << 14), 3, 6));

gpu_test!(express_tasks, common::express_tasks(&gpu(1 << 14), 4, 5_000));

gpu_test!(express_tasks_without_relay, {
    let rt = Runtime::with_config(RuntimeConfig { capacity: 1 << 14, relay_max_batch: 0, relay_publish: false, ..RuntimeConfig::cuda() })
        .unwrap();
    common::express_tasks(&rt, 4, 2_000);
});

gpu_test!(buffers_outlive_runtime, common::buffers_outlive_runtime(|| gpu(1 << 10)));

// Reliability (docs/reliability.md). The fault-injection tests (trap, illegal address,
// hang) live in tests/gpu_faults.rs: a process of their own, and no sanitizer.

fn gpu_with(f: impl FnOnce(&mut RuntimeConfig)) -> Runtime {
    let mut c = RuntimeConfig { capacity: 1 << 12, shutdown_timeout: Duration::from_secs(2), ..RuntimeConfig::cuda() };
    f(&mut c);
    Runtime::with_config(c).expect("a CUDA GPU")
}

gpu_test!(watchdog_spares_progressing_work, {
    let d = Duration::from_secs(1);
    common::faults::watchdog_spares_progressing_work(&gpu_with(|c| c.task_deadline = Some(d)), d, Duration::from_millis(20));
});

gpu_test!(drop_with_hung_tasks_is_bounded, {
    let rt = gpu_with(|_| {});
    let workers = rt.backend().workers as usize;
    common::faults::drop_with_hung_tasks_is_bounded(rt, workers, Duration::from_secs(2));
});

gpu_test!(
    drop_drains_short_tasks,
    common::faults::drop_drains_short_tasks(gpu_with(|c| c.shutdown_timeout = Duration::from_secs(60)), 3000)
);

gpu_test!(close_with_stuck_producer_is_bounded, {
    common::faults::close_with_stuck_producer_is_bounded(gpu_with(|c| c.capacity = 64), Duration::from_secs(2));
});

gpu_test!(typed_errors_for_refusals, common::faults::typed_errors_for_refusals(gpu_with(|_| {})));

gpu_test!(raw_axpy_through_unsafe_api, common::faults::raw_axpy_through_unsafe_api(&gpu_with(|_| {})));

// Device memory (cuMemGetInfo, through a stream-API handle this test holds so that the
// primary context and its pools stay put), pinned and device allocations, threads: flat
// across runtimes.
gpu_test!(no_leaks_across_runtimes, {
    let gpu = resident::stream::Device::first().expect("a CUDA GPU");
    let used = || gpu.memory_info().map(|(free, total)| (total - free) as u64);
    common::leaks::no_leaks_across_runtimes(|| gpu_with(|c| c.capacity = 1 << 16), 4, false, used, 64 << 20);
});

// The buffer arena (`RuntimeConfig::buffer_arena`, for compute-sanitizer runs): buffers
// carved from one allocation made before the launch work like any other, come back
// zeroed after reuse, and a request the arena cannot hold is a typed error.
gpu_test!(buffer_arena_carves_reuses_and_refuses, {
    let rt = Runtime::with_config(RuntimeConfig { buffer_arena: 16 << 20, ..RuntimeConfig::cuda() }).unwrap();
    common::axpy_matches_reference(&rt, 200, 1024);
    let a = rt.buffer_from(&vec![7u32; 1 << 20]).unwrap(); // 4 MiB, poisoned
    drop(a);
    let b = rt.buffer::<u32>(1 << 20).unwrap(); // the same block again
    assert!(b.read().unwrap().iter().all(|&v| v == 0), "a reused block comes back zeroed");
    assert!(matches!(rt.buffer::<f32>(16 << 20), Err(resident::Error::ArenaFull(_))), "64 MiB from a 16 MiB arena");
    drop(b);
    let c = rt.buffer::<f32>(3 << 20).unwrap(); // 12 MiB: the freed blocks merged
    assert_eq!(c.len(), 3 << 20);
});

// Buffers of any Pod element type; buffers and counters past the old cap of 4096.
gpu_test!(any_pod_elements, elements::any_pod_elements(&gpu(1 << 16)));
gpu_test!(many_buffers_and_counters, elements::many_buffers_and_counters(&gpu(1 << 16), 6_000));
