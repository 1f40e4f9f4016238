//! Elastic residency on a CUDA GPU (the scenarios are in
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
isolated_test!(
    #[ignore = "needs a CUDA GPU"]
    auto_yields_to_another_context,
    LIMIT,
    yields_to_another_context()
);

/// `Residency::Auto` beside another context that time-slices with the runtime's (a
/// context of its own in this process: contexts time-slice as processes do, without
/// MPS). Alone, tasks 3 ms apart keep the kernel resident (the 10 ms idle time) and
/// the relay sees no slice taken; once the other context runs a kernel, the relay sees
/// its slices, and the kernel leaves as soon as the queue drains: tasks 3 ms apart
/// then each find it gone. A second after the other context is done, `Auto` is back
/// to the idle time.
fn yields_to_another_context() {
    use resident::Task;
    use std::time::Instant;
    let rt = resident::Runtime::with_config(gpu()).unwrap();
    let paced = |n: u64| {
        let before = rt.metrics().residency;
        for _ in 0..n {
            rt.submit(&[Task::noop(0)]).unwrap().wait().unwrap();
            std::thread::sleep(Duration::from_millis(3));
        }
        rt.metrics().residency.exits - before.exits
    };
    let alone_exits = paced(20);
    let alone = rt.metrics().residency;
    assert_eq!((alone_exits, alone.slices_taken, alone.contended), (0, 0, false), "{alone:?}");
    let other = std::thread::spawn(|| other_context_spins(Duration::from_millis(600)));
    let t = Instant::now();
    while !rt.metrics().residency.contended {
        assert!(t.elapsed() < Duration::from_secs(2), "no slice seen beside another context: {:?}", rt.metrics().residency);
        // Keeps the kernel resident (the relay sees slices only while it runs) while
        // the other context starts.
        rt.submit(&[Task::noop(0)]).unwrap().wait().unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    let seen = t.elapsed();
    let contended_exits = paced(20);
    let during = rt.metrics().residency;
    other.join().unwrap();
    println!("alone {alone:?}; first slice seen after {seen:?}; beside the other context: {contended_exits} exits of 20, {during:?}");
    assert!(contended_exits >= 10, "{contended_exits} exits of 20 beside another context: {during:?}");
    assert!(during.slices_taken > 0 && during.last_slice >= Duration::from_micros(500), "{during:?}");
    // A second with no slice taken: back to the idle time.
    std::thread::sleep(resident::Residency::CONTENDED_HOLD + Duration::from_millis(100));
    assert!(!rt.metrics().residency.contended, "{:?}", rt.metrics().residency);
    rt.submit(&[Task::noop(0)]).unwrap().wait().unwrap();
    assert_eq!(paced(10), 0, "{:?}", rt.metrics().residency);
}

/// A kernel of one thread that spins on `%globaltimer` for `time`, in a CUDA context of
/// its own (not the primary one the runtime uses) on device 0.
fn other_context_spins(time: Duration) {
    use cudarc::driver::sys;
    const PTX: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry spin(.param .u64 ns)
{
    .reg .u64 %t0, %t1, %d, %n;
    .reg .pred %p;
    ld.param.u64 %n, [ns];
    mov.u64 %t0, %globaltimer;
WAIT:
    mov.u64 %t1, %globaltimer;
    sub.u64 %d, %t1, %t0;
    setp.lt.u64 %p, %d, %n;
    @%p bra WAIT;
    ret;
}
\0";
    let ok = |r: sys::CUresult, what: &str| assert_eq!(r, sys::CUresult::CUDA_SUCCESS, "{what}");
    // SAFETY: plain driver calls on handles made here, destroyed at the end; the
    // kernel's one parameter is the u64 `ns`, passed by address as cuLaunchKernel
    // expects, and outlives the launch (synchronized before return).
    unsafe {
        let mut dev = 0;
        ok(sys::cuDeviceGet(&mut dev, 0), "cuDeviceGet");
        let mut ctx = std::ptr::null_mut();
        ok(sys::cuCtxCreate_v4(&mut ctx, std::ptr::null_mut(), 0, dev), "cuCtxCreate");
        let mut module = std::ptr::null_mut();
        ok(sys::cuModuleLoadData(&mut module, PTX.as_ptr().cast()), "cuModuleLoadData");
        let mut f = std::ptr::null_mut();
        ok(sys::cuModuleGetFunction(&mut f, module, c"spin".as_ptr()), "cuModuleGetFunction");
        let mut ns = time.as_nanos() as u64;
        let mut params = [(&raw mut ns).cast::<std::ffi::c_void>()];
        ok(sys::cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, std::ptr::null_mut(), params.as_mut_ptr(), std::ptr::null_mut()), "cuLaunchKernel");
        ok(sys::cuCtxSynchronize(), "cuCtxSynchronize");
        ok(sys::cuModuleUnload(module), "cuModuleUnload");
        ok(sys::cuCtxDestroy_v2(ctx), "cuCtxDestroy");
    }
}
