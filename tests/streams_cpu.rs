//! `resident::stream` on the CPU device (`Device::cpu()`), in CI: the scenarios the GPU
//! suite runs (tests/common/streams.rs, shared with tests/streams_gpu.rs), and what is
//! the CPU device's own: its execution model (cooperative grids, limits), failure,
//! capture of copies and events, blocking calls from callbacks, the persistent CPU
//! runtime's streams.

mod common;

use bytemuck::{Pod, Zeroable};
use common::streams as scenario;
use common::timeout::within;
use resident::stream::{Device, LaunchConfig};
use resident::{Completion, Error, KernelImage, OneTaskParams, Runtime, RuntimeConfig, Task};
use resident_device::kernels::pipeline::{PipelineParams, element};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

macro_rules! cpu_scenarios {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            scenario::$name(&Device::cpu());
        }
    )*};
}

cpu_scenarios!(
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
fn a_scope_waits_for_another_threads_capture_of_its_stream() {
    let gpu = Device::cpu();
    within(Duration::from_secs(60), "a scope's end during another thread's capture", move || {
        scenario::a_scope_waits_for_another_threads_capture_of_its_stream(&gpu)
    });
}

#[test]
fn callbacks_from_other_threads_are_never_captured() {
    let gpu = Device::cpu();
    within(Duration::from_secs(120), "callbacks against captures", move || scenario::callbacks_from_other_threads_are_never_captured(&gpu));
}

#[test]
fn chunked_scoped_pipeline_matches_the_host() {
    scenario::chunked_scoped_pipeline_matches_the_host(&Device::cpu(), (1 << 20) + 123);
}

fn cpu_runtime() -> Runtime {
    Runtime::with_config(RuntimeConfig { cpu_workers: 2, ..RuntimeConfig::cpu() }).unwrap()
}

#[test]
fn a_stream_follows_a_tickets_tasks() {
    let rt = cpu_runtime();
    scenario::a_stream_follows_a_tickets_tasks(&rt.device().unwrap(), &rt);
    // Any CPU device's stream may wait for a CPU runtime's ticket.
    scenario::a_stream_follows_a_tickets_tasks(&Device::cpu(), &rt);
}

#[test]
fn one_task_launches_match_submit() {
    scenario::one_task_launches_match_submit(&cpu_runtime());
}

#[test]
fn the_cpu_device_describes_itself() {
    let gpu = Device::cpu();
    assert!(gpu.is_cpu());
    assert_eq!(gpu.name(), "CPU");
    assert!(gpu.sm_count() >= 1);
    assert_eq!(gpu.memory_info(), None);
    assert_eq!(gpu.stream().unwrap().raw(), std::ptr::null_mut());
    if !resident::cuda_available() {
        assert!(Device::auto().unwrap().is_cpu());
    }
    // A CPU runtime's device is the same handle every time: its buffers and streams mix.
    let rt = cpu_runtime();
    let (a, b) = (rt.device().unwrap(), rt.device().unwrap());
    let x = a.alloc_from(&[1u32, 2, 3]).unwrap();
    let y = b.alloc_zeroed::<u32>(3).unwrap();
    b.stream().unwrap().copy_d2d(&x, &y).unwrap();
    assert_eq!(y.to_vec().unwrap(), [1, 2, 3]);
    // Two CPU devices do not mix.
    assert!(matches!(Device::cpu().stream().unwrap().copy_d2d(&x, &y), Err(Error::ForeignHandle(_))));
    assert_eq!(rt.module().unwrap().image(), "resident");
}

// A kernel whose blocks wait for each other: each block arrives, waits until every
// block of the grid has arrived, then writes what it saw. Run one block at a time it
// would wait forever; a cooperative launch runs them all at once.

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct BarrierParams {
    /// One `u32` arrival counter.
    arrivals: u64,
    /// One `u32` per block.
    seen: u64,
}

struct GridBarrier;

impl resident_device::DeviceKernel for GridBarrier {
    type Params = BarrierParams;
    unsafe fn run(p: &BarrierParams) {
        use resident_device::arch;
        // SAFETY: the launch's addresses (the test's buffers) hold the counter and one
        // u32 per block.
        let arrivals = unsafe { AtomicU32::from_ptr(p.arrivals as *mut u32) };
        // Release/acquire: a block that sees every arrival sees the arrivals' writes.
        arrivals.fetch_add(1, Ordering::AcqRel);
        let deadline = Instant::now() + Duration::from_secs(10);
        while arrivals.load(Ordering::Acquire) < arch::grid_dim() && Instant::now() < deadline {
            std::thread::yield_now();
        }
        unsafe { *(p.seen as *mut u32).add(arch::block_idx() as usize) = arrivals.load(Ordering::Acquire) };
    }
}

/// The smem kernel: writes `dyn_smem_bytes()` and the block's shape as it sees them.
struct Shape;

impl resident_device::DeviceKernel for Shape {
    type Params = u64;
    unsafe fn run(out: &u64) {
        use resident_device::arch;
        let o = *out as *mut u32;
        let b = arch::block_idx() as usize * 4;
        unsafe {
            *o.add(b) = arch::dyn_smem_bytes();
            *o.add(b + 1) = arch::block_dim();
            *o.add(b + 2) = arch::grid_dim();
            *o.add(b + 3) = arch::thread_idx() + arch::lane_id() + resident_device::arch::WARP;
        }
    }
}

/// A panic payload whose `Drop` panics with the next one, `n` levels deep (a user type
/// in `panic_any`: nothing stops its `Drop` from panicking).
struct Bomb(u32);

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.0 > 0 {
            std::panic::panic_any(Bomb(self.0 - 1));
        }
    }
}

/// A kernel that panics with a `Bomb` of the given depth.
struct BombKernel;

impl resident_device::DeviceKernel for BombKernel {
    type Params = u32;
    unsafe fn run(depth: &u32) {
        std::panic::panic_any(Bomb(*depth));
    }
}

const TEST_KERNELS: &[resident::__CpuKernelRow] = &[
    ("grid_barrier", resident::__cpu_kernel::<GridBarrier> as resident::__CpuKernelFn, resident::__cpu_kernel_param_bytes::<GridBarrier>()),
    ("shape", resident::__cpu_kernel::<Shape> as resident::__CpuKernelFn, resident::__cpu_kernel_param_bytes::<Shape>()),
    ("bomb", resident::__cpu_kernel::<BombKernel> as resident::__CpuKernelFn, resident::__cpu_kernel_param_bytes::<BombKernel>()),
];

/// A kernel image with the test's kernels compiled for the host and no PTX (as
/// `resident-build` would make on a machine without the device toolchain).
fn test_image() -> KernelImage {
    KernelImage::__from_build::<resident_device::Builtins>(resident::__ImageParts {
        name: "streams_cpu_test",
        ptx: "",
        block_threads: 32,
        max_registers: 0,
        scratch_bytes_per_warp: 0,
        list_chunks: true,
        kernels: TEST_KERNELS,
    })
}

#[test]
fn a_cooperative_launch_runs_every_block_at_once() {
    let gpu = Device::cpu();
    let module = gpu.load(&test_image()).unwrap();
    assert_eq!(module.image(), "streams_cpu_test");
    let f = module.function::<BarrierParams>("grid_barrier").unwrap();
    assert_eq!(f.blocks_per_sm(256, 0).unwrap(), 1);
    let st = gpu.stream().unwrap();
    for blocks in [1u32, 7, 64, 1024] {
        let arrivals = gpu.alloc_zeroed::<u32>(1).unwrap();
        let seen = gpu.alloc_zeroed::<u32>(blocks as usize).unwrap();
        let p = BarrierParams { arrivals: arrivals.device_ptr(), seen: seen.device_ptr() };
        // SAFETY: the buffers hold the counter and one u32 per block, alive until the
        // stream is synchronized.
        unsafe { st.launch(&f, LaunchConfig::new(blocks, 64).cooperative(), p) }.unwrap();
        st.synchronize().unwrap();
        assert!(seen.to_vec().unwrap().iter().all(|&s| s == blocks), "{blocks} blocks: a block passed the barrier early");
    }
    // More blocks than the CPU runs at once: refused before anything runs.
    let p = BarrierParams { arrivals: 0, seen: 0 };
    // SAFETY: refused before anything runs.
    let r = unsafe { st.launch(&f, LaunchConfig::new(1025, 1).cooperative(), p) };
    assert!(matches!(r, Err(Error::Config(_))), "{r:?}");
    st.synchronize().unwrap();
}

#[test]
fn launches_see_the_cpu_block_model_and_limits_are_typed_errors() {
    let gpu = Device::cpu();
    let f = gpu.load(&test_image()).unwrap().function::<u64>("shape").unwrap();
    let st = gpu.stream().unwrap();
    let out = gpu.alloc_zeroed::<u32>(4 * 5).unwrap();
    // SAFETY: 4 u32 per block, 5 blocks, alive until synchronized.
    unsafe { st.launch(&f, LaunchConfig::new(5, 256).shared_bytes(1000).programmatic(), out.device_ptr()) }.unwrap();
    st.synchronize().unwrap();
    for (b, v) in out.to_vec().unwrap().chunks(4).enumerate() {
        // smem as asked, one thread per block, the grid, thread 0 of a one-lane warp.
        assert_eq!(v, [1000, 1, 5, 1], "block {b}");
    }
    let smem = resident_device::arch::CPU_SMEM_BYTES as u32;
    assert_eq!(f.blocks_per_sm(32, smem + 1).unwrap(), 0);
    let cfgs = [
        LaunchConfig { grid: (2, 2, 1), ..LaunchConfig::new(1, 32) },
        LaunchConfig::new(1, 32).shared_bytes(smem + 1),
        LaunchConfig::new(0, 32),
        LaunchConfig::new(1, 2048),
    ];
    for cfg in cfgs {
        // SAFETY: refused before anything runs.
        let r = unsafe { st.launch(&f, cfg, out.device_ptr()) };
        assert!(matches!(r, Err(Error::Config(_))), "{cfg:?}: {r:?}");
    }
    // A function of a CPU module on a stream of another CPU device: refused.
    let other = Device::cpu().stream().unwrap();
    // SAFETY: refused before anything runs.
    assert!(matches!(unsafe { other.launch(&f, LaunchConfig::new(1, 1), out.device_ptr()) }, Err(Error::ForeignHandle(_))));
    st.synchronize().unwrap();
}

/// A kernel that traps fails its stream for good, as a CUDA error fails the context:
/// later work on it is skipped and every synchronize reports the fault; its event
/// records still complete, so another stream waiting on one goes on.
#[test]
fn a_failing_operation_fails_the_stream() {
    let gpu = Device::cpu();
    let f = gpu.kernels().function::<OneTaskParams>("resident_one_task").unwrap();
    let rec = gpu.alloc_zeroed::<Completion>(1).unwrap();
    // SAFETY: the trap task touches no memory (it panics on the CPU).
    let p = OneTaskParams { task: unsafe { Task::fault_trap() }, completion: rec.device_ptr(), buffers: 0, seq: 0, _pad: [0; 11] };
    let (s, other) = (gpu.stream().unwrap(), gpu.stream().unwrap());
    let (before, after, other_ran) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let b = before.clone();
    s.on_host(move || b.store(true, Ordering::SeqCst)).unwrap();
    // SAFETY: as above.
    unsafe { s.launch(&f, LaunchConfig::new(1, 32), p) }.unwrap();
    let a = after.clone();
    s.on_host(move || a.store(true, Ordering::SeqCst)).unwrap();
    let ev = gpu.event().unwrap();
    s.record(&ev).unwrap();
    other.wait_event(&ev).unwrap();
    let o = other_ran.clone();
    other.on_host(move || o.store(true, Ordering::SeqCst)).unwrap();
    assert!(matches!(s.synchronize(), Err(Error::DeviceFault(_))));
    assert!(matches!(s.is_idle(), Err(Error::DeviceFault(_))));
    assert!(matches!(s.synchronize(), Err(Error::DeviceFault(_))), "the failure is sticky");
    assert!(before.load(Ordering::SeqCst) && !after.load(Ordering::SeqCst), "work after the fault ran");
    other.synchronize().unwrap();
    assert!(other_ran.load(Ordering::SeqCst) && ev.is_complete().unwrap());
    // A scope whose stream fails still ends (after its thread is past every copy).
    let mut host = gpu.pinned::<Completion>(1).unwrap();
    let r = gpu.scope(|sc| {
        let st = sc.stream()?;
        // SAFETY: as above.
        unsafe { st.launch(&f, LaunchConfig::new(1, 32), p) }?;
        st.copy_d2h(&rec, &mut host)
    });
    assert!(matches!(r, Err(Error::DeviceFault(_))), "{r:?}");
    assert_eq!(host[0].stamp, 0, "the copy after the fault ran");
}

/// Copies, kernels, event records and waits captured on the CPU device replay with
/// the buffers' cross-stream order tracked anew at each replay: `b` reads what a replay
/// writes with no wait of its own, and the replay writes only after a spin, so a read
/// not ordered after the replay's write would see the previous round's values.
#[test]
fn captured_copies_and_events_replay() {
    let gpu = Device::cpu();
    let n = 5000;
    let input: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.25).collect();
    let x = gpu.alloc_from(&input).unwrap();
    let (y, z) = (gpu.alloc_zeroed::<f32>(n).unwrap(), gpu.alloc_zeroed::<f32>(n).unwrap());
    let (a, b) = (gpu.stream().unwrap(), gpu.stream().unwrap());
    let (ev, flag) = (gpu.event().unwrap(), gpu.alloc_zeroed::<u32>(1).unwrap());
    let graph = a
        .capture(|s| {
            s.spin_write(flag.view(), 7, scenario::SPIN)?; // the writes below come late
            s.pipeline(x.view(), x.view(), 2)?; // x = f(x)
            s.copy_d2d(&x, &y)?; // y = x
            s.record(&ev)?;
            s.wait_stream(&b)
        })
        .unwrap();
    a.synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), input, "the capture ran");
    assert!(ev.is_complete().unwrap(), "the capture recorded the event");
    let mut want = input.clone();
    for round in 1..=2 {
        flag.copy_from_slice(&[0]).unwrap();
        graph.launch(&a).unwrap();
        // No wait of b's own: the replay went through the tracker, which orders b's read
        // of y after the replay's write of it.
        b.copy_d2d(&y, &z).unwrap();
        b.synchronize().unwrap();
        want = want.iter().map(|&v| element(v, 2)).collect();
        assert_eq!(z.to_vec().unwrap(), want, "round {round}: b read y before the replay wrote it");
        a.synchronize().unwrap();
        assert_eq!(flag.to_vec().unwrap(), vec![7]);
        assert!(ev.is_complete().unwrap());
    }
    // Replayed on another stream of the device, with a buffer it holds after the user
    // dropped theirs.
    drop((x, z));
    let c = gpu.stream().unwrap();
    graph.launch(&c).unwrap();
    c.synchronize().unwrap();
    want = want.iter().map(|&v| element(v, 2)).collect();
    assert_eq!(y.to_vec().unwrap(), want);
    // Captures do not nest; and a graph of the CPU device runs only there.
    assert!(matches!(a.capture(|s| s.capture(|_| Ok(())).map(|_| ())), Err(Error::Config(_))));
    assert!(matches!(graph.launch(&Device::cpu().stream().unwrap()), Err(Error::ForeignHandle(_))));
}

/// A ticket wait cannot be captured (a ticket's tasks complete once); outside a capture
/// it orders the stream after the tasks.
#[test]
fn ticket_waits_are_not_captured() {
    let rt = cpu_runtime();
    let s = rt.device().unwrap().stream().unwrap();
    let t = rt.submit(&[Task::spin(Duration::from_secs(1).as_nanos() as u64)]).unwrap();
    assert!(matches!(s.capture(|s| s.wait_ticket(&t)), Err(Error::Config(_))));
    let done = t.record_event(&s).unwrap();
    done.synchronize().unwrap();
    assert!(matches!(t.try_wait(), Some(Ok(()))));
}

/// The stream API refuses its blocking calls on a CPU stream's thread (a callback that
/// waited for streams could wait for itself), and a callback that drops the last handle
/// of its own stream does not hang.
#[test]
fn blocking_calls_are_refused_in_callbacks() {
    let gpu = Device::cpu();
    let s = Arc::new(gpu.stream().unwrap());
    let buf = Arc::new(gpu.alloc_zeroed::<u32>(4).unwrap());
    let ev = Arc::new(gpu.event().unwrap());
    let results = Arc::new(Mutex::new(Vec::new()));
    let (s2, b2, e2, r2, g2) = (s.clone(), buf.clone(), ev.clone(), results.clone(), gpu.clone());
    s.on_host(move || {
        let mut r = r2.lock().unwrap();
        r.push(s2.synchronize().is_err());
        r.push(e2.synchronize().is_err());
        r.push(b2.to_vec().is_err());
        r.push(b2.copy_from_slice(&[1, 2, 3, 4]).is_err());
        r.push(g2.scope(|_| Ok(())).is_err());
        // Enqueueing does not block: allowed.
        r.push(s2.spin_write(b2.view(), 5, Duration::ZERO).is_ok());
    })
    .unwrap();
    s.synchronize().unwrap();
    assert_eq!(*results.lock().unwrap(), [true; 6]);
    assert_eq!(buf.to_vec().unwrap(), [5, 0, 0, 0]);

    // The last handle of a stream dropped by its own callback.
    let own = gpu.stream().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<resident::stream::Stream>();
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    own.on_host(move || {
        let me = rx.recv().unwrap();
        drop(me);
        d.store(true, Ordering::SeqCst);
    })
    .unwrap();
    tx.send(own).unwrap();
    let t = Instant::now();
    while !done.load(Ordering::SeqCst) {
        assert!(t.elapsed() < Duration::from_secs(10), "a callback dropping its own stream hung");
        std::thread::yield_now();
    }
}

/// Many streams, each waiting on events of the others, all run to the end (waits
/// resolve to records enqueued before them, so no cycle can form).
#[test]
fn cross_stream_waits_never_deadlock() {
    let ran = within(Duration::from_secs(30), "6 streams waiting on each other's events", || {
        let gpu = Device::cpu();
        let streams: Vec<_> = (0..6).map(|_| gpu.stream().unwrap()).collect();
        let events: Vec<_> = (0..6).map(|_| gpu.event().unwrap()).collect();
        let counter = Arc::new(AtomicU32::new(0));
        let mut rng = 12345u64;
        for _ in 0..2000 {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let (i, j) = ((rng >> 33) as usize % 6, (rng >> 45) as usize % 6);
            match (rng >> 20) % 3 {
                0 => streams[i].record(&events[j]).unwrap(),
                1 => streams[i].wait_event(&events[j]).unwrap(),
                _ => {
                    let c = counter.clone();
                    streams[i]
                        .on_host(move || {
                            c.fetch_add(1, Ordering::Relaxed);
                        })
                        .unwrap();
                }
            }
        }
        for s in &streams {
            s.synchronize().unwrap();
        }
        counter.load(Ordering::Relaxed)
    });
    assert!(ran > 0);
}

/// Bound for the tests below, which hung before (a CPU stream's thread died).
const HANG: Duration = Duration::from_secs(10);

/// A host callback that panics with a payload whose `Drop` panics (twice over): the
/// panic is caught and contained (the payload is dropped inside a catch, and the next
/// one leaked), it does not fail the stream (a callback's panic never does), and
/// everything after it runs: the stream's later work, another stream waiting on it, a
/// scope's end, the stream's drop.
#[test]
fn a_callback_panic_whose_payload_panics_on_drop_is_contained() {
    let (synced, later_ran, other, scoped) = within(HANG, "a stream after a callback's Bomb(2)", || {
        let gpu = Device::cpu();
        let (s, other) = (gpu.stream().unwrap(), gpu.stream().unwrap());
        s.on_host(|| std::panic::panic_any(Bomb(2))).unwrap();
        let later = Arc::new(AtomicBool::new(false));
        let l = later.clone();
        s.on_host(move || l.store(true, Ordering::SeqCst)).unwrap();
        let ev = gpu.event().unwrap();
        s.record(&ev).unwrap();
        other.wait_event(&ev).unwrap();
        let other = other.synchronize();
        let synced = s.synchronize();
        drop(s);
        let scoped = gpu.scope(|sc| sc.stream()?.on_host(|| std::panic::panic_any(Bomb(2))));
        (synced, later.load(Ordering::SeqCst), other, scoped)
    });
    assert_eq!(synced, Ok(()), "a callback's panic failed its stream");
    assert!(later_ran, "work after the callback did not run");
    assert_eq!(other, Ok(()));
    assert_eq!(scoped, Ok(()));
}

/// A kernel that panics with a payload whose `Drop` panics fails its stream with a
/// typed `DeviceFault` (as any panicking kernel), and nothing hangs: later work is
/// skipped, records complete, another stream waiting on one goes on, the stream drops.
#[test]
fn a_kernel_panic_whose_payload_panics_on_drop_fails_the_stream() {
    let (synced, later_ran, other, scoped) = within(HANG, "a stream after a kernel's Bomb(2)", || {
        let gpu = Device::cpu();
        let f = gpu.load(&test_image()).unwrap().function::<u32>("bomb").unwrap();
        let (s, other) = (gpu.stream().unwrap(), gpu.stream().unwrap());
        // SAFETY: the kernel touches no memory.
        unsafe { s.launch(&f, LaunchConfig::new(1, 1), 2) }.unwrap();
        let later = Arc::new(AtomicBool::new(false));
        let l = later.clone();
        s.on_host(move || l.store(true, Ordering::SeqCst)).unwrap();
        let ev = gpu.event().unwrap();
        s.record(&ev).unwrap();
        other.wait_event(&ev).unwrap();
        let other = other.synchronize();
        let synced = s.synchronize();
        drop(s);
        let scoped = gpu.scope(|sc| {
            let st = sc.stream()?;
            // SAFETY: as above.
            unsafe { st.launch(&f, LaunchConfig::new(1, 1), 2) }
        });
        (synced, later.load(Ordering::SeqCst), other, scoped)
    });
    assert!(matches!(synced, Err(Error::DeviceFault(_))), "{synced:?}");
    assert!(!later_ran, "work after the fault ran");
    assert_eq!(other, Ok(()));
    assert!(matches!(scoped, Err(Error::DeviceFault(_))), "{scoped:?}");
}

/// On a failed stream later closures are skipped, and dropped unrun: a captured value
/// whose `Drop` panics (twice over) is contained. The stream reports its failure, a
/// typed `DeviceFault`, and nothing hangs (synchronize, another stream's wait, a scope,
/// the stream's drop, a `to_vec` through the device's internal stream).
#[test]
fn a_skipped_closure_whose_capture_panics_on_drop_is_contained() {
    let (synced, later_ran, other, scoped, read) = within(HANG, "a failed stream skipping a Bomb(2)", || {
        let gpu = Device::cpu();
        let f = gpu.load(&test_image()).unwrap().function::<u32>("bomb").unwrap();
        let (s, other) = (gpu.stream().unwrap(), gpu.stream().unwrap());
        let x = gpu.alloc_zeroed::<u32>(4).unwrap();
        // SAFETY: the kernel touches no memory; it panics with a payload that drops quietly.
        unsafe { s.launch(&f, LaunchConfig::new(1, 1), 0) }.unwrap();
        let bomb = Bomb(2);
        s.on_host(move || {
            let _keep = &bomb;
        })
        .unwrap();
        let later = Arc::new(AtomicBool::new(false));
        let l = later.clone();
        s.on_host(move || l.store(true, Ordering::SeqCst)).unwrap();
        s.spin_write(x.view(), 1, Duration::ZERO).unwrap();
        let ev = gpu.event().unwrap();
        s.record(&ev).unwrap();
        other.wait_event(&ev).unwrap();
        let other = other.synchronize();
        let synced = s.synchronize();
        let read = x.to_vec();
        drop(s);
        let scoped = gpu.scope(|sc| {
            let st = sc.stream()?;
            // SAFETY: as above.
            unsafe { st.launch(&f, LaunchConfig::new(1, 1), 0) }?;
            let bomb = Bomb(2);
            st.on_host(move || {
                let _keep = &bomb;
            })
        });
        (synced, later.load(Ordering::SeqCst), other, scoped, read)
    });
    assert!(matches!(synced, Err(Error::DeviceFault(_))), "{synced:?}");
    assert!(!later_ran, "work after the fault ran");
    assert_eq!(other, Ok(()));
    assert!(matches!(scoped, Err(Error::DeviceFault(_))), "{scoped:?}");
    assert_eq!(read, Ok(vec![0; 4]), "the write after the fault ran");
}

/// Eight threads submit to one CPU stream at once: device copies and kernels, host
/// callbacks, event records and waits, and scoped downloads of their results through
/// the same stream, adopted by a scope on each thread. Each thread's operations run in
/// its order (one stream), none is lost or run twice, and every result is checked.
#[test]
fn many_threads_submit_to_one_stream() {
    const THREADS: u32 = 8;
    const ROUNDS: usize = 150;
    const N: usize = 64;
    within(Duration::from_secs(60), "8 threads on one CPU stream", || {
        let gpu = Device::cpu();
        let s = gpu.stream().unwrap();
        let watcher = gpu.stream().unwrap();
        let total = Arc::new(AtomicU32::new(0));
        std::thread::scope(|threads| {
            for t in 0..THREADS {
                let (gpu, s, watcher, total) = (&gpu, &s, &watcher, total.clone());
                threads.spawn(move || {
                    // `a` is written one element per round; `snaps` keeps a copy of `a`
                    // after each round's write, taken on the same stream.
                    let start: Vec<u32> = (0..N as u32).map(|i| t << 24 | i).collect();
                    let a = gpu.alloc_from(&start).unwrap();
                    let snaps = gpu.alloc_zeroed::<u32>(N * ROUNDS).unwrap();
                    let ev = gpu.event().unwrap();
                    let seen = Arc::new(Mutex::new(Vec::new()));
                    let followed = Arc::new(Mutex::new(Vec::new()));
                    for r in 0..ROUNDS {
                        let value = t << 24 | 1 << 20 | r as u32;
                        s.spin_write(a.slice(r % N..), value, Duration::ZERO).unwrap();
                        s.copy_d2d(&a, snaps.slice(r * N..(r + 1) * N)).unwrap();
                        let (sn, tot) = (seen.clone(), total.clone());
                        s.on_host(move || {
                            sn.lock().unwrap().push(r);
                            tot.fetch_add(1, Ordering::Relaxed);
                        })
                        .unwrap();
                        s.record(&ev).unwrap();
                        if r % 25 == 0 {
                            // Another stream follows this thread's record: its callback
                            // sees this round's callback done.
                            watcher.wait_event(&ev).unwrap();
                            let (sn, followed) = (seen.clone(), followed.clone());
                            watcher.on_host(move || followed.lock().unwrap().push(sn.lock().unwrap().contains(&r))).unwrap();
                            ev.synchronize().unwrap();
                            assert_eq!(seen.lock().unwrap().last(), Some(&r), "thread {t}: the record came before the callback");
                        }
                    }
                    let mut host = gpu.pinned::<u32>(N * ROUNDS).unwrap();
                    gpu.scope(|sc| sc.adopt(s)?.copy_d2h(&snaps, &mut host)).unwrap();
                    let mut want = start;
                    for r in 0..ROUNDS {
                        want[r % N] = t << 24 | 1 << 20 | r as u32;
                        assert_eq!(host[r * N..(r + 1) * N], want[..], "thread {t}, round {r}");
                    }
                    assert_eq!(*seen.lock().unwrap(), (0..ROUNDS).collect::<Vec<_>>(), "thread {t}: callbacks out of order");
                    watcher.synchronize().unwrap();
                    let followed = followed.lock().unwrap();
                    assert!(followed.len() == ROUNDS.div_ceil(25) && followed.iter().all(|&f| f), "thread {t}: {followed:?}");
                });
            }
        });
        s.synchronize().unwrap();
        watcher.synchronize().unwrap();
        assert_eq!(total.load(Ordering::Relaxed), THREADS * ROUNDS as u32);
    });
}

/// The pipeline kernel on big inputs split over streams equals the host's map (the
/// overlap example's CPU run, in small).
#[test]
fn pipeline_launch_in_chunks_over_streams() {
    let gpu = Device::cpu();
    let f = gpu.kernels().function::<PipelineParams>("resident_pipeline").unwrap();
    let n = 300_001;
    let input: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0).collect();
    let x = gpu.alloc_from(&input).unwrap();
    let streams: Vec<_> = (0..3).map(|_| gpu.stream().unwrap()).collect();
    for (k, r) in (0..n).step_by(50_000).map(|s| s..(s + 50_000).min(n)).enumerate() {
        let p = PipelineParams {
            input: x.device_ptr() + (r.start * 4) as u64,
            output: x.device_ptr() + (r.start * 4) as u64,
            len: r.len() as u64,
            iters: 9,
            _pad: 0,
        };
        // SAFETY: disjoint chunks of x, alive until the streams are synchronized.
        unsafe { streams[k % 3].launch(&f, LaunchConfig::for_elements(r.len() as u32, 256), p) }.unwrap();
    }
    streams.iter().for_each(|s| s.synchronize().unwrap());
    let got = x.to_vec().unwrap();
    assert!(got.iter().zip(&input).all(|(&o, &i)| o == element(i, 9)));
}

/// On the CPU device nothing is compiled for a GPU: no driver attributes to report.
#[test]
fn kernel_info_on_the_cpu_is_none() {
    let image = KernelImage::builtin();
    let module = Device::cpu().load(&image).unwrap();
    assert_eq!(module.kernel_info("resident_persistent", 256).unwrap(), None);
}
