//! SM partitions: a cuBLAS GEMM (bf16, 8192^3, through cudarc's cuBLAS
//! bindings) on another stream of the same process, beside a runtime confined to half
//! the SMs through a green context, against the same GEMM on the same SMs alone; and the
//! runtime's own throughput as its share of the SMs grows. All in one run, medians of
//! device-event timings after warm-up.
//!
//!     cargo bench --bench partition      # on a GPU (or staged by tools/gpu/pack.sh)
//!
//! Rows (TFLOP/s of the GEMM; every GEMM row times 10 back-to-back GEMMs per sample):
//! - alone: on the whole device (an ordinary stream), and on the rest stream of a
//!   runtime whose kernel is parked (its SMs idle: "the same SM count alone");
//! - beside a runtime busy in its half: on the rest stream, and on an ordinary stream
//!   (which may also use the runtime's SMs); busy = a producer thread streaming
//!   host-fed batches of 4096 axpy tasks (1024 floats each), or replaying a resident
//!   list of them (memory-bound at the device's bandwidth);
//! - for contrast: on an ordinary stream beside an unpartitioned runtime, busy the
//!   same ways;
//! - the runtime alone in partitions of 1/4, 1/2, 3/4 of the SMs and the whole device: a
//!   resident list of 20,000 noops, a resident list of 4096 axpy tasks (GB/s), and
//!   40,000 tasks that each hold their warp for 20 us (tasks/s).
//!
//! Without a GPU (or without libcublas) it says so and measures nothing.

mod common;

use common::median_of;
use criterion::{Criterion, criterion_group, criterion_main};
use cudarc::cublas::sys as blas;
use cudarc::driver::sys as cu;
use resident::stream::{Device, Stream};
use resident::{Residency, Runtime, RuntimeConfig, Task};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const N: i32 = 8192;
const REPS: usize = 10;
const SAMPLES: usize = 9;
const AXPY_LEN: usize = 1024;
const AXPY_TASKS: usize = 4096;

/// A bf16 GEMM C = A B (fp32 accumulate) with its own cuBLAS handle.
struct Gemm {
    handle: blas::cublasHandle_t,
    bufs: [cu::CUdeviceptr; 3],
    _ctx: std::sync::Arc<cudarc::driver::CudaContext>,
}

// SAFETY: a cuBLAS handle may move between threads when it is not used concurrently
// (cuBLAS docs, "Thread safety"): each `Gemm` is used by one thread at a time, which
// binds the context first (`enqueue`).
unsafe impl Send for Gemm {}

impl Gemm {
    fn new() -> Option<Self> {
        let ctx = cudarc::driver::CudaContext::new(0).ok()?;
        ctx.bind_to_thread().ok()?;
        let created = std::panic::catch_unwind(|| {
            let mut h = std::ptr::null_mut();
            // SAFETY: the driver's primary context is current; cuBLAS writes one handle.
            (unsafe { blas::cublasCreate_v2(&mut h) } == blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS).then_some(h)
        });
        let Ok(Some(handle)) = created else {
            println!("\npartition: libcublas could not be loaded or initialized; GEMM rows not measured");
            return None;
        };
        let bytes = (N as usize) * (N as usize) * 2;
        let mut bufs = [0; 3];
        for b in &mut bufs {
            // SAFETY: the context is current; the driver writes one pointer.
            assert_eq!(unsafe { cu::cuMemAlloc_v2(b, bytes) }, cu::CUresult::CUDA_SUCCESS);
            // 0x3c00 is 1.0 in f16, 0x3f80 in bf16: inputs of ones, a finite product.
            // SAFETY: `bytes` bytes were allocated just now.
            assert_eq!(unsafe { cu::cuMemsetD16_v2(*b, 0x3f80, bytes / 2) }, cu::CUresult::CUDA_SUCCESS);
        }
        // SAFETY: a live context; waits for the memsets.
        unsafe { cu::cuCtxSynchronize() };
        Some(Self { handle, bufs, _ctx: ctx })
    }

    /// `REPS` GEMMs enqueued on `stream`.
    fn enqueue(&self, stream: &Stream) {
        let (alpha, beta) = (1.0f32, 0.0f32);
        let bf16 = blas::cudaDataType::CUDA_R_16BF;
        self._ctx.bind_to_thread().unwrap();
        // SAFETY: a live handle and stream; the three buffers hold N x N bf16 each and
        // live as long as `self`; alpha and beta are host scalars (the default mode).
        unsafe {
            assert_eq!(blas::cublasSetStream_v2(self.handle, stream.raw() as _), blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS);
            for _ in 0..REPS {
                let s = blas::cublasGemmEx(
                    self.handle,
                    blas::cublasOperation_t::CUBLAS_OP_N,
                    blas::cublasOperation_t::CUBLAS_OP_N,
                    N,
                    N,
                    N,
                    &alpha as *const f32 as *const _,
                    self.bufs[0] as *const _,
                    bf16,
                    N,
                    self.bufs[1] as *const _,
                    bf16,
                    N,
                    &beta as *const f32 as *const _,
                    self.bufs[2] as *mut _,
                    bf16,
                    N,
                    blas::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    blas::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                );
                assert_eq!(s, blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS);
            }
        }
    }

    /// [`Gemm::tflops`] if a first `REPS` GEMMs finish within [`STARVED`]; `None` (and
    /// those GEMMs still queued on `stream`) if not.
    fn probe(&self, gpu: &Device, stream: &Stream) -> Option<f64> {
        let done = gpu.event().unwrap();
        self.enqueue(stream);
        stream.record(&done).unwrap();
        let start = Instant::now();
        while !done.is_complete().unwrap() {
            if start.elapsed() > STARVED {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Some(self.tflops(gpu, stream))
    }

    /// Median TFLOP/s on `stream`, timed by events around `REPS` GEMMs.
    fn tflops(&self, gpu: &Device, stream: &Stream) -> f64 {
        let (start, end) = (gpu.event().unwrap(), gpu.event().unwrap());
        let t = median_of(
            || {
                stream.record(&start).unwrap();
                self.enqueue(stream);
                stream.record(&end).unwrap();
                stream.synchronize().unwrap();
                end.elapsed_since(&start).unwrap()
            },
            2,
            SAMPLES,
        );
        2.0 * (N as f64).powi(3) * REPS as f64 / t.as_secs_f64() / 1e12
    }
}

impl Drop for Gemm {
    fn drop(&mut self) {
        // SAFETY: owned here; nothing is enqueued after the last synchronize.
        unsafe {
            blas::cublasDestroy_v2(self.handle);
            for b in self.bufs {
                cu::cuMemFree_v2(b);
            }
        }
    }
}

fn config(partition: Option<u32>) -> RuntimeConfig {
    RuntimeConfig { capacity: 1 << 16, residency: Residency::Always, sm_partition: partition, ..RuntimeConfig::cuda() }
}

/// How the runtime is kept busy while a GEMM runs.
#[derive(Clone, Copy, Debug)]
enum Load {
    /// Host-fed batches of axpy tasks, one producer thread.
    Stream,
    /// A resident list of axpy tasks, replayed.
    List,
}

/// `f` while a producer thread keeps `rt` busy with `load`; the runtime's axpy
/// throughput meanwhile (tasks/s).
fn while_busy<R>(rt: &Runtime, load: Load, f: impl FnOnce() -> R) -> (R, f64) {
    let x = rt.buffer_from(&vec![1.0f32; AXPY_LEN * AXPY_TASKS]).unwrap();
    let y = rt.buffer::<f32>(AXPY_LEN * AXPY_TASKS).unwrap();
    let tasks: Vec<Task> = (0..AXPY_TASKS)
        .map(|i| Task::axpy(0.5, x.slice(i * AXPY_LEN..(i + 1) * AXPY_LEN), y.slice(i * AXPY_LEN..(i + 1) * AXPY_LEN)))
        .collect();
    let list = rt.upload_tasks(&tasks).unwrap();
    let (stop, done) = (AtomicBool::new(false), AtomicU64::new(0));
    std::thread::scope(|s| {
        let producer = s.spawn(|| {
            let start = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                let t = match load {
                    Load::Stream => rt.submit(&tasks).unwrap(),
                    Load::List => list.submit().unwrap(),
                };
                t.wait().unwrap();
                done.fetch_add(AXPY_TASKS as u64, Ordering::Relaxed);
            }
            done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64()
        });
        // The producer stops even if `f` panics (else the scope would wait for ever).
        struct Stop<'a>(&'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let stop_guard = Stop(&stop);
        // Let the load reach its pace first.
        std::thread::sleep(Duration::from_millis(50));
        let r = f();
        drop(stop_guard);
        (r, producer.join().unwrap())
    })
}

/// cuBLAS's first GEMM on the rest stream of a resident (partitioned) runtime, before
/// cuBLAS ran anywhere in the process: CUDA loads modules lazily, and a load waits for
/// the context's running kernels (docs/architecture.md, "Pitfalls"). By default the
/// remedy is measured: the set-up and first GEMM inside [`Sharing::with_kernel_out`],
/// then a task on the relaunched kernel and a GEMM beside it. With
/// `PARTITION_COLD_START=wait` the problem itself: the first GEMM enqueued while the
/// kernel is resident, on a thread of its own, let through by parking the runtime after
/// [`STARVED`] (a process shows one or the other: the first load happens once).
fn cold_start() -> Option<Gemm> {
    let sms = Device::first().unwrap().sm_count();
    let rt = Runtime::with_config(config(Some(sms / 2))).unwrap();
    rt.submit(&[Task::noop(0)]).unwrap().wait().unwrap();
    let rest = rt.sharing().rest_stream(0).unwrap();
    let gpu = rt.device().unwrap();
    let first_gemm = || {
        let g = Gemm::new()?;
        let done = gpu.event().unwrap();
        g.enqueue(&rest);
        rest.record(&done).unwrap();
        done.synchronize().unwrap();
        Some(g)
    };
    const ROW: &str = "first cuBLAS GEMM in the process, rest stream, runtime resident";
    let gemm = if std::env::var("PARTITION_COLD_START").as_deref() == Ok("wait") {
        cold_start_waits(&rt, first_gemm)
    } else {
        let start = Instant::now();
        let g = rt.sharing().with_kernel_out(first_gemm).unwrap();
        let out = start.elapsed();
        let t = Instant::now();
        rt.submit(&[Task::noop(0)]).unwrap().wait().unwrap();
        let relaunch = t.elapsed();
        println!(
            "{:<78} {:.1} ms inside with_kernel_out (drain, exit, cuBLAS set-up, GEMM); next task {:.1} us (relaunch)",
            ROW,
            out.as_secs_f64() * 1e3,
            relaunch.as_secs_f64() * 1e6
        );
        if let Some(g) = &g {
            let warm = starved_or(&rt, &rest, || g.probe(&gpu, &rest));
            println!("{:<78} {warm}", "then a GEMM beside the relaunched kernel");
        }
        g
    };
    drop(rest);
    drop(rt);
    gemm
}

/// The cold start without the remedy (`PARTITION_COLD_START=wait`).
fn cold_start_waits(rt: &Runtime, first_gemm: impl FnOnce() -> Option<Gemm> + Send) -> Option<Gemm> {
    let (tx, rx) = std::sync::mpsc::channel();
    let start = Instant::now();
    std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let g = first_gemm();
            let _ = tx.send(());
            g
        });
        match rx.recv_timeout(STARVED) {
            Ok(()) => println!(
                "{:<78} ran, {:.1} ms (cuBLAS's set-up included)",
                "first cuBLAS GEMM in the process, rest stream, runtime resident",
                start.elapsed().as_secs_f64() * 1e3
            ),
            Err(_) => {
                while !rt.sharing().release().unwrap() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                let parked = Instant::now();
                let ok = rx.recv_timeout(Duration::from_secs(30)).is_ok();
                println!(
                    "{:<78} waited: nothing after {} s; {} {:.1} ms after the runtime's kernel exited",
                    "first cuBLAS GEMM in the process, rest stream, runtime resident",
                    STARVED.as_secs(),
                    if ok { "done" } else { "still not done" },
                    parked.elapsed().as_secs_f64() * 1e3
                );
            }
        }
        worker.join().unwrap()
    })
}

fn gemm_rows(gemm: &Gemm) {
    let gpu = Device::first().unwrap();
    let sms = gpu.sm_count();
    let ordinary = gpu.stream().unwrap();
    let whole = gemm.tflops(&gpu, &ordinary);
    println!("\nbf16 GEMM {N}^3 (cuBLAS through cudarc), {REPS} per sample, median of {SAMPLES}; TFLOP/s");
    println!("{:<78} {:>8.1}", format!("alone, whole device ({sms} SMs), ordinary stream"), whole);

    let rt = Runtime::with_config(config(Some(sms / 2))).unwrap();
    let p = rt.sharing().partition().unwrap();
    println!("runtime partition: {p:?}; {}", rt.backend().layout);
    let rest = rt.sharing().rest_stream(gpu.priorities().low()).unwrap();
    // The runtime's kernel parked: the rest's SMs alone.
    let start = Instant::now();
    while rt.metrics().residency.resident && start.elapsed() < Duration::from_secs(1) {
        let _ = rt.sharing().release();
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(!rt.metrics().residency.resident, "the runtime's kernel did not park");
    let alone = gemm.tflops(&gpu, &rest);
    println!("{:<78} {:>8.1}", format!("alone, rest stream ({} SMs; the runtime parked)", p.rest_sms), alone);
    drop(rest);
    drop(rt);

    let rt = Runtime::with_config(config(Some(sms / 2))).unwrap();
    let rest = rt.sharing().rest_stream(gpu.priorities().low()).unwrap();
    for load in [Load::Stream, Load::List] {
        for (stream, name, base) in [(&rest, "rest stream", alone), (&ordinary, "ordinary stream", whole)] {
            let (t, rate) = while_busy(&rt, load, || gemm.probe(&gpu, stream));
            let row = match t {
                Some(t) => format!("{t:>8.1}  ({:.1}% of {name} alone)", 100.0 * t / base),
                None => starved_or(&rt, stream, || None),
            };
            println!(
                "{:<78} {row}  (runtime {:.1} M tasks/s)",
                format!("beside a runtime busy in {} SMs ({load:?}), {name}", p.sms),
                rate / 1e6
            );
        }
    }
    drop(rest);
    drop(rt);

    // For contrast, an unpartitioned runtime: its blocks hold registers and shared
    // memory on every SM, busy or idle, and the GEMM's blocks may not fit beside them.
    let rt = Runtime::with_config(config(None)).unwrap();
    let idle = starved_or(&rt, &ordinary, || gemm.probe(&gpu, &ordinary));
    println!("{:<78} {idle}", "beside an unpartitioned runtime, idle but resident, ordinary stream");
    for load in [Load::Stream, Load::List] {
        let (row, rate) = while_busy(&rt, load, || gemm.probe(&gpu, &ordinary));
        let row = starved_or(&rt, &ordinary, || row);
        println!(
            "{:<78} {row}  (runtime {:.1} M tasks/s)",
            format!("beside an unpartitioned runtime, busy ({load:?}), ordinary stream"),
            rate / 1e6
        );
    }
}

/// How long the contrast rows wait for a GEMM before they call it starved.
const STARVED: Duration = Duration::from_secs(3);

/// The row for a probe: TFLOP/s, or, when no GEMM finished in [`STARVED`], the runtime
/// is parked (its kernel exits, freeing the SMs) so that the queued GEMMs can finish,
/// and the row says so.
fn starved_or(rt: &Runtime, stream: &Stream, probe: impl FnOnce() -> Option<f64>) -> String {
    match probe() {
        Some(t) => format!("{t:>8.1}"),
        None => {
            let start = Instant::now();
            while !rt.sharing().release().unwrap() {
                assert!(start.elapsed() < Duration::from_secs(10), "the runtime never went idle");
                std::thread::sleep(Duration::from_millis(1));
            }
            let parked = Instant::now();
            stream.synchronize().unwrap();
            format!(
                "starved: no GEMM had finished after {} s; they ran {:.1} ms after the runtime's kernel exited",
                STARVED.as_secs(),
                parked.elapsed().as_secs_f64() * 1e3
            )
        }
    }
}

/// The runtime alone in growing shares of the SMs.
fn share_rows() {
    let sms = Device::first().unwrap().sm_count();
    println!("\nthe runtime alone by SM share        SMs  workers  20k noop list us  axpy list GB/s  20us spins M tasks/s");
    for share in [Some(sms / 4), Some(sms / 2), Some(sms * 3 / 4), None] {
        let rt = Runtime::with_config(config(share)).unwrap();
        let got = rt.sharing().partition().map_or(sms, |p| p.sms);
        let noops = rt.upload_tasks(&vec![Task::noop(0); 20_000]).unwrap();
        let t_noop = median_of(
            || {
                let s = Instant::now();
                noops.submit().unwrap().wait().unwrap();
                s.elapsed()
            },
            20,
            201,
        );
        let x = rt.buffer_from(&vec![1.0f32; AXPY_LEN * AXPY_TASKS]).unwrap();
        let y = rt.buffer::<f32>(AXPY_LEN * AXPY_TASKS).unwrap();
        let tasks: Vec<Task> = (0..AXPY_TASKS)
            .map(|i| Task::axpy(0.5, x.slice(i * AXPY_LEN..(i + 1) * AXPY_LEN), y.slice(i * AXPY_LEN..(i + 1) * AXPY_LEN)))
            .collect();
        let axpy = rt.upload_tasks(&tasks).unwrap();
        let t_axpy = median_of(
            || {
                let s = Instant::now();
                axpy.submit().unwrap().wait().unwrap();
                s.elapsed()
            },
            5,
            51,
        );
        let gbs = (AXPY_LEN * AXPY_TASKS * 12) as f64 / t_axpy.as_secs_f64() / 1e9;
        let spins = vec![Task::spin(20_000); 40_000];
        let t_spin = median_of(
            || {
                let s = Instant::now();
                rt.submit(&spins).unwrap().wait().unwrap();
                s.elapsed()
            },
            1,
            5,
        );
        println!(
            "{:<36} {:>4} {:>8} {:>17.1} {:>15.1} {:>21.2}",
            match share {
                Some(n) => format!("sm_partition: Some({n})"),
                None => "whole device".into(),
            },
            got,
            rt.backend().workers,
            t_noop.as_secs_f64() * 1e6,
            gbs,
            40_000.0 / t_spin.as_secs_f64() / 1e6
        );
    }
}

fn bench(c: &mut Criterion) {
    if Device::first().map(|g| g.is_cpu()).unwrap_or(true) {
        println!("\npartition: no CUDA GPU; nothing measured");
        return;
    }
    if let Some(gemm) = cold_start() {
        gemm_rows(&gemm);
    }
    share_rows();
    // One criterion row, so that `cargo bench` reports something comparable over time:
    // a 20,000-noop resident list in a half-device partition.
    let sms = Device::first().unwrap().sm_count();
    let rt = Runtime::with_config(config(Some(sms / 2))).unwrap();
    let list = rt.upload_tasks(&vec![Task::noop(0); 20_000]).unwrap();
    c.bench_function("partition/half/list_20k_noops", |b| b.iter(|| list.submit().unwrap().wait().unwrap()));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
