//! SM partitions (`RuntimeConfig::sm_partition`): the runtime's kernels in a
//! CUDA green context of part of the SMs, the rest left to the application.
//!
//! The first test runs everywhere (CI has no GPU: a partition on the CPU backend is a
//! typed error). The others need a GPU:
//!
//!     <partition test binary> --include-ignored --test-threads=1

mod common;

use common::{residency, streams};
use resident::{Error, Residency, Runtime, RuntimeConfig, Task};
use std::time::Duration;

#[test]
fn a_partition_without_green_contexts_is_a_typed_error() {
    let cpu = RuntimeConfig { sm_partition: Some(8), ..RuntimeConfig::cpu() };
    match Runtime::with_config(cpu) {
        Err(Error::PartitionUnsupported(why)) => assert!(why.contains("CPU"), "{why}"),
        other => panic!("a partition on the CPU backend: {other:?}"),
    }
    let zero = RuntimeConfig { sm_partition: Some(0), ..RuntimeConfig::cpu() };
    assert!(matches!(Runtime::with_config(zero), Err(Error::Config(_))));
    // No partition: no rest stream, a typed error.
    let rt = Runtime::with_config(RuntimeConfig::cpu()).unwrap();
    assert_eq!(rt.sharing().partition(), None);
    assert!(matches!(rt.sharing().rest_stream(0), Err(Error::Config(_))));
}

/// Half the device (rounded by the driver).
fn half() -> RuntimeConfig {
    let sms = resident::stream::Device::first().unwrap().sm_count();
    RuntimeConfig { capacity: 1 << 14, shutdown_timeout: Duration::from_secs(2), sm_partition: Some(sms / 2), ..RuntimeConfig::cuda() }
}

const LIMIT: Duration = Duration::from_secs(120);

/// The grid is sized from the partition: the same blocks per SM as on the whole
/// device, on the partition's SMs; the rest is what the partition leaves.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_grid_is_sized_from_the_partition() {
    let whole = Runtime::with_config(RuntimeConfig { sm_partition: None, ..half() }).unwrap();
    // The stream-API handle of the runtime's device (a `Device::first` beside a live
    // runtime is refused: DeviceInUse).
    let (whole_workers, device_sms) = (whole.backend().workers, whole.device().unwrap().sm_count());
    assert_eq!(whole.sharing().partition(), None);
    drop(whole);
    let rt = Runtime::with_config(half()).unwrap();
    let p = rt.sharing().partition().expect("a partition");
    eprintln!("partition {p:?}; {}", rt.backend().layout);
    assert_eq!(p.device_sms, device_sms);
    assert!(p.sms >= device_sms / 2 && p.sms < device_sms, "{p:?}");
    assert_eq!(p.sms + p.rest_sms, device_sms, "{p:?}");
    assert_eq!(rt.backend().workers, whole_workers / device_sms * p.sms, "{}", rt.backend().layout);
    assert!(rt.backend().layout.contains("green context"), "{}", rt.backend().layout);
}

/// Requests the device cannot serve are typed errors, and leave the device usable.
#[test]
#[ignore = "needs a CUDA GPU"]
fn impossible_partitions_are_refused() {
    let sms = resident::stream::Device::first().unwrap().sm_count();
    for n in [sms, sms + 1, u32::MAX] {
        match Runtime::with_config(RuntimeConfig { sm_partition: Some(n), ..half() }) {
            Err(Error::Config(why)) => assert!(why.contains("sm_partition"), "{why}"),
            other => panic!("a partition of {n} SMs of {sms}: {other:?}"),
        }
    }
    // The smallest: rounded up to the driver's granularity.
    let rt = Runtime::with_config(RuntimeConfig { sm_partition: Some(1), ..half() }).unwrap();
    let p = rt.sharing().partition().unwrap();
    assert!(p.sms >= 1 && p.sms < sms, "{p:?}");
    let marks = rt.buffer::<u32>(4096).unwrap();
    rt.submit(&(0..4096).map(|i| Task::mark(marks.all(), i)).collect::<Vec<_>>()).unwrap().wait().unwrap();
    assert!(marks.read().unwrap().iter().all(|&m| m == 1));
}

isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    partition_cycles_exactly_once,
    LIMIT,
    residency::cycles_exactly_once(half, 100)
);
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    partition_producers_race_exits,
    LIMIT,
    residency::producers_race_exits(half, 4, 100)
);

/// Kernels on the rest stream run beside the busy runtime, and run right: the stream
/// API's pipeline kernel, checked against the host, while every warp of the runtime
/// holds a 200 ms spin task (still running when the kernel has finished: so it ran
/// beside them, on the rest's SMs).
fn rest_stream_beside_busy_runtime() {
    let rt = Runtime::with_config(RuntimeConfig { residency: Residency::Always, ..half() }).unwrap();
    let gpu = rt.device().unwrap();
    let s = rt.sharing().rest_stream(gpu.priorities().low()).unwrap();
    assert!(!s.raw().is_null());
    let n = (1 << 20) + 37;
    let input = streams::random(n);
    let x = gpu.alloc_from(&input).unwrap();
    let y = gpu.alloc_zeroed::<f32>(n).unwrap();
    // Poisoned: every element must be written.
    y.view().write_from(&vec![f32::NAN; n]).unwrap();
    let busy = rt.submit(&vec![Task::spin(200_000_000); rt.backend().workers as usize]).unwrap();
    std::thread::sleep(Duration::from_millis(5));
    s.pipeline(x.view(), y.view(), 3).unwrap();
    s.synchronize().unwrap();
    assert!(busy.try_wait().is_none(), "the runtime's spins ended before the rest stream's kernel: nothing ran beside them");
    streams::assert_pipeline(&y.to_vec().unwrap(), &input, 3);
    busy.wait().unwrap();
    drop(s);
    rt.close().unwrap();
}

isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    the_rest_stream_runs_beside_a_busy_runtime,
    LIMIT,
    rest_stream_beside_busy_runtime()
);
