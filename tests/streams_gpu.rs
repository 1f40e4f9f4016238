//! GPU tests of `resident::stream`: ordering between streams, host callbacks, event
//! timing, the scoped copy pipeline, launches and graphs, the persistent runtime beside
//! streams. The scenarios are tests/common/streams.rs, which tests/streams_cpu.rs runs
//! on the CPU device in CI. All need a CUDA GPU and fail (never pass) without one:
//!
//!     cargo test --release --test streams_gpu -- --include-ignored --test-threads=1

mod common;

use common::streams as scenario;
use common::timeout::within;
use resident::stream::Device;
use resident::{Runtime, RuntimeConfig};
use std::time::Duration;

fn gpu() -> Device {
    Device::first().expect("these tests need a CUDA GPU (and a build with PTX)")
}

macro_rules! gpu_scenarios {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        #[ignore = "needs a CUDA GPU"]
        fn $name() {
            scenario::$name(&gpu());
        }
    )*};
}

gpu_scenarios!(
    a_write_on_one_stream_is_seen_by_another_through_the_inserted_wait,
    the_tracker_orders_conflicting_uses_across_streams,
    the_tracker_orders_writes_after_writes_across_streams,
    wait_event_orders_one_stream_after_another,
    wait_stream_orders_one_stream_after_another,
    callbacks_run_in_stream_order,
    events_time_a_known_spin,
    to_vec_waits_for_a_pending_write,
    scope_after_and_fork_wait_for_earlier_work,
    priorities_are_reported_and_clamped,
    dropping_a_buffer_in_use_frees_it_after_the_use,
    length_mismatches_are_errors,
    launches_of_the_builtin_pipeline_match_the_host,
    a_parameter_size_mismatch_is_refused,
    captured_launches_replay,
    cooperative_launches_with_large_shared_memory,
    capture_refuses_callbacks_and_pinned_copies,
    a_capture_that_panics_ends,
);

// Threads that capture a stream and threads that use it, under a deadline (a
// regression here hangs).

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_scope_waits_for_another_threads_capture_of_its_stream() {
    let gpu = gpu();
    within(Duration::from_secs(60), "a scope's end during another thread's capture", move || {
        scenario::a_scope_waits_for_another_threads_capture_of_its_stream(&gpu)
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn callbacks_from_other_threads_are_never_captured() {
    let gpu = gpu();
    within(Duration::from_secs(120), "callbacks against captures", move || scenario::callbacks_from_other_threads_are_never_captured(&gpu));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn chunked_scoped_pipeline_matches_the_host() {
    scenario::chunked_scoped_pipeline_matches_the_host(&gpu(), (1 << 22) + 123);
}

// The persistent runtime and streams together.

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_stream_follows_a_tickets_tasks() {
    // The Device first: its module is loaded before the persistent kernel is resident.
    let gpu = gpu();
    let rt = Runtime::with_config(RuntimeConfig::cuda()).expect("a CUDA GPU");
    scenario::a_stream_follows_a_tickets_tasks(&gpu, &rt);
    // Stop the persistent kernel before the `Device` goes: unloading its module waits for
    // the context's kernels, and a resident one never ends (docs/streams.md).
    rt.shutdown().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_task_launches_match_submit() {
    let rt = Runtime::with_config(RuntimeConfig::cuda()).expect("a CUDA GPU");
    scenario::one_task_launches_match_submit(&rt);
    rt.shutdown().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_runtime_copies_on_a_lent_stream() {
    use resident::Task;
    let gpu = gpu();
    let high = gpu.priorities().high();
    let rt = Runtime::builder()
        .with_config(RuntimeConfig::cuda())
        .transfer_stream(gpu.stream_with_priority(high).unwrap())
        .build()
        .expect("a CUDA GPU");
    assert_eq!(rt.transfer_stream().unwrap().priority(), high);
    let n = 1 << 16;
    let xs: Vec<f32> = (0..n).map(|i| (i % 977) as f32 * 0.5).collect();
    let x = rt.buffer_from(&xs).unwrap();
    let y = rt.buffer::<f32>(n).unwrap();
    // Batches of both kinds: small ones (relay) and large ones (copies on the lent stream).
    for (chunk, batch) in [(256usize, 8usize), (64, 1024)] {
        let tasks: Vec<Task> =
            (0..n / chunk).map(|i| Task::axpy(1.0, x.slice(i * chunk..(i + 1) * chunk), y.slice(i * chunk..(i + 1) * chunk))).collect();
        // Each round writes all of y: the second starts after the first has completed.
        let tickets: Vec<_> = tasks.chunks(batch).map(|b| rt.submit(b).unwrap()).collect();
        tickets.iter().for_each(|t| t.wait().unwrap());
    }
    let want: Vec<f32> = xs.iter().map(|v| 2.0 * v).collect();
    assert_eq!(y.read().unwrap(), want);
    rt.shutdown().unwrap();
}

/// Two handles of one device share its primary context: an event recorded on a stream
/// of one is waited on and timed from a stream of the other, buffers of one are copied
/// on a stream of the other, and the CPU device's stream refuses a GPU buffer, typed.
#[test]
#[ignore = "needs a CUDA GPU"]
fn handles_of_one_device_mix() {
    let (a, b) = (gpu(), Device::new(0).expect("a CUDA GPU"));
    let (sa, sb) = (a.stream().unwrap(), b.stream().unwrap());
    let x = a.alloc_from(&[1u32, 2, 3, 4]).unwrap();
    let y = b.alloc_zeroed::<u32>(4).unwrap();
    let (start, end) = (a.event().unwrap(), b.event().unwrap());
    sa.record(&start).unwrap();
    sa.copy_d2d(&x, &y).unwrap();
    let done = a.event().unwrap();
    sa.record(&done).unwrap();
    sb.wait_event(&done).unwrap();
    sb.record(&end).unwrap();
    end.synchronize().unwrap();
    assert!(end.elapsed_since(&start).is_ok());
    assert_eq!(y.to_vec().unwrap(), [1, 2, 3, 4]);
    let cpu = Device::cpu().stream().unwrap();
    assert!(matches!(cpu.copy_d2d(&x, &y), Err(resident::Error::ForeignHandle(_))));
    assert!(matches!(cpu.wait_event(&done), Err(resident::Error::ForeignHandle(_))));
}

/// The driver's view of the built-in image's kernels: the persistent kernel within the
/// register cap its build sets (80), with room for the runtime's blocks; every ordinary
/// kernel present.
#[test]
#[ignore = "needs a CUDA GPU"]
fn kernel_info_reports_the_images_kernels() {
    let image = resident::KernelImage::builtin();
    let module = gpu().load(&image).unwrap();
    let k = module.kernel_info("resident_persistent", image.block_threads()).unwrap().expect("a CUDA module");
    assert!(k.registers > 0 && k.registers <= 80, "{k:?}");
    assert!(k.blocks_per_sm >= 2, "{k:?}");
    for name in image.kernels() {
        assert!(module.kernel_info(name, 32).unwrap().is_some_and(|k| k.registers > 0), "{name}");
    }
    assert!(module.kernel_info("no_such_kernel", 32).is_err());
}
