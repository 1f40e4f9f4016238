//! Scenarios of `resident::stream` run on both devices: tests/streams_cpu.rs (CI, on
//! `Device::cpu()`) and tests/streams_gpu.rs (a CUDA GPU, `--include-ignored`), so that the
//! CPU run and the GPU run check the same things. Each takes the device (and, where
//! the persistent runtime takes part, a runtime on it), draws fresh random inputs where
//! it computes, and checks against the host.

use rand::Rng;
use resident::stream::{Device, DeviceBuffer, Function, LaunchConfig, Stream};
use resident::{Completion, Error, Runtime, Task};
use resident_device::kernels::pipeline::{PipelineParams, element};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const SPIN: Duration = Duration::from_millis(20);

pub fn random(n: usize) -> Vec<f32> {
    let mut rng = rand::rng();
    (0..n).map(|_| rng.random_range(-4.0f32..4.0)).collect()
}

/// `got` is `element(x, iters)` of `input` for every element, to a float's rounding.
pub fn assert_pipeline(got: &[f32], input: &[f32], iters: u32) {
    assert_eq!(got.len(), input.len());
    for (i, (&o, &x)) in got.iter().zip(input).enumerate() {
        let want = element(x, iters);
        assert!((o - want).abs() <= 1e-6 * want.abs().max(1.0), "element {i}: {o} != {want}");
    }
}

pub fn a_write_on_one_stream_is_seen_by_another_through_the_inserted_wait(gpu: &Device) {
    let (a, b) = (gpu.stream().unwrap(), gpu.stream().unwrap());
    let flag = gpu.alloc_zeroed::<u32>(1).unwrap();
    let seen = gpu.alloc_zeroed::<u32>(1).unwrap();
    let (start, end) = (gpu.event().unwrap(), gpu.event().unwrap());
    a.record(&start).unwrap();
    a.spin_write(flag.view(), 42, SPIN).unwrap();
    // No explicit wait: the tracker makes b wait for a's write of `flag`.
    b.copy_d2d(&flag, &seen).unwrap();
    b.record(&end).unwrap();
    b.synchronize().unwrap();
    assert_eq!(seen.to_vec().unwrap(), vec![42]);
    assert!(end.elapsed_since(&start).unwrap() >= SPIN, "b's copy ended before a's spin could have");
}

/// Read after write and write after read across streams, with no explicit wait: a
/// kernel on `a` writes `x`, a copy on `b` reads it; then a kernel on `a` reads `x`
/// while a copy on `b` overwrites it with other values, which must wait for the read.
pub fn the_tracker_orders_conflicting_uses_across_streams(gpu: &Device) {
    let n = 1 << 16;
    let (a, b) = (gpu.stream().unwrap(), gpu.stream().unwrap());
    let input = random(n);
    let x = gpu.alloc_from(&input).unwrap();
    let (y, z) = (gpu.alloc_zeroed::<f32>(n).unwrap(), gpu.alloc_zeroed::<f32>(n).unwrap());
    let flag = gpu.alloc_zeroed::<u32>(1).unwrap();
    // Write on a (after a spin, so that b would run first if nothing ordered it), read on b.
    a.spin_write(flag.view(), 1, SPIN).unwrap();
    a.pipeline(x.view(), x.view(), 50).unwrap();
    b.copy_d2d(&x, &y).unwrap();
    b.synchronize().unwrap();
    assert_pipeline(&y.to_vec().unwrap(), &input, 50);
    // Read on a (after a spin), write on b: b's copy must not overwrite x before a's
    // read. y holds other values than x now, so a read after the overwrite would show.
    let once = x.to_vec().unwrap();
    let other = random(n);
    y.copy_from_slice(&other).unwrap();
    a.spin_write(flag.view(), 2, SPIN).unwrap();
    a.pipeline(x.view(), z.view(), 3).unwrap();
    b.copy_d2d(&y, &x).unwrap();
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    assert_pipeline(&z.to_vec().unwrap(), &once, 3);
    assert_eq!(x.to_vec().unwrap(), other);
}

/// Write after write across streams, with no explicit wait: a copy on `a` (after a
/// spin) writes all of `x`, then a copy on `b` overwrites part of it, and must land
/// last; then the same the other way round, with the spin on `b`.
pub fn the_tracker_orders_writes_after_writes_across_streams(gpu: &Device) {
    let n = 1 << 16;
    let (a, b) = (gpu.stream().unwrap(), gpu.stream().unwrap());
    let (first, second) = (random(n), random(n));
    let (p, q) = (gpu.alloc_from(&first).unwrap(), gpu.alloc_from(&second).unwrap());
    let x = gpu.alloc_zeroed::<f32>(n).unwrap();
    let flag = gpu.alloc_zeroed::<u32>(1).unwrap();
    a.spin_write(flag.view(), 1, SPIN).unwrap();
    a.copy_d2d(&p, &x).unwrap();
    b.copy_d2d(q.slice(n / 4..), x.slice(n / 4..)).unwrap();
    b.synchronize().unwrap();
    let want: Vec<f32> = first[..n / 4].iter().chain(&second[n / 4..]).copied().collect();
    assert_eq!(x.to_vec().unwrap(), want, "a's write landed after b's");
    // Partial first (on b, after a spin), whole second (on a).
    b.spin_write(flag.view(), 2, SPIN).unwrap();
    b.copy_d2d(p.slice(..n / 2), x.slice(..n / 2)).unwrap();
    a.copy_d2d(&q, &x).unwrap();
    a.synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), second, "b's write landed after a's");
}

pub fn wait_event_orders_one_stream_after_another(gpu: &Device) {
    let (a, b) = (gpu.stream().unwrap(), gpu.stream().unwrap());
    let flag = gpu.alloc_zeroed::<u32>(1).unwrap();
    let a_done = Arc::new(AtomicBool::new(false));
    let b_saw = Arc::new(Mutex::new(None));
    let ev = gpu.event().unwrap();
    a.spin_write(flag.view(), 1, SPIN).unwrap();
    let d = a_done.clone();
    a.on_host(move || d.store(true, Ordering::SeqCst)).unwrap();
    a.record(&ev).unwrap();
    b.wait_event(&ev).unwrap();
    let (d, saw) = (a_done.clone(), b_saw.clone());
    b.on_host(move || *saw.lock().unwrap() = Some(d.load(Ordering::SeqCst))).unwrap();
    b.synchronize().unwrap();
    assert_eq!(*b_saw.lock().unwrap(), Some(true), "b's callback ran before a's work it waited for");
}

pub fn wait_stream_orders_one_stream_after_another(gpu: &Device) {
    let (a, b) = (gpu.stream().unwrap(), gpu.stream().unwrap());
    let flag = gpu.alloc_zeroed::<u32>(1).unwrap();
    let a_done = Arc::new(AtomicBool::new(false));
    let b_saw = Arc::new(Mutex::new(None));
    a.spin_write(flag.view(), 1, SPIN).unwrap();
    let d = a_done.clone();
    a.on_host(move || d.store(true, Ordering::SeqCst)).unwrap();
    b.wait_stream(&a).unwrap();
    let (d, saw) = (a_done.clone(), b_saw.clone());
    b.on_host(move || *saw.lock().unwrap() = Some(d.load(Ordering::SeqCst))).unwrap();
    b.synchronize().unwrap();
    assert_eq!(*b_saw.lock().unwrap(), Some(true));
}

pub fn callbacks_run_in_stream_order(gpu: &Device) {
    let st = gpu.stream().unwrap();
    let x = gpu.alloc_zeroed::<f32>(1 << 16).unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    for i in 0..200 {
        if i % 10 == 0 {
            st.pipeline(x.view(), x.view(), 50).unwrap();
        }
        let o = order.clone();
        st.on_host(move || o.lock().unwrap().push(i)).unwrap();
    }
    st.synchronize().unwrap();
    assert_eq!(*order.lock().unwrap(), (0..200).collect::<Vec<_>>());
}

pub fn events_time_a_known_spin(gpu: &Device) {
    let st = gpu.stream().unwrap();
    let flag = gpu.alloc_zeroed::<u32>(1).unwrap();
    let (start, end) = (gpu.event().unwrap(), gpu.event().unwrap());
    assert!(end.is_complete().unwrap(), "an event never recorded counts as complete");
    st.record(&start).unwrap();
    st.spin_write(flag.view(), 3, SPIN).unwrap();
    st.record(&end).unwrap();
    end.synchronize().unwrap();
    assert!(end.is_complete().unwrap());
    let t = end.elapsed_since(&start).unwrap();
    assert!(t >= SPIN && t < SPIN * 20, "elapsed {t:?} for a {SPIN:?} spin");
    // Measured the wrong way round: a typed error, not a panic.
    assert!(start.elapsed_since(&end).is_err());
}

pub fn to_vec_waits_for_a_pending_write(gpu: &Device) {
    let st = gpu.stream().unwrap();
    let flag = gpu.alloc_zeroed::<u32>(1).unwrap();
    st.spin_write(flag.view(), 9, SPIN).unwrap();
    assert_eq!(flag.to_vec().unwrap(), vec![9]);
}

/// Upload, kernel, download in 8 chunks over 4 streams of a scope (examples/overlap.rs).
pub fn chunked_scoped_pipeline_matches_the_host(gpu: &Device, n: usize) {
    let mut input = gpu.pinned_write_combined::<f32>(n).unwrap();
    let mut output = gpu.pinned::<f32>(n).unwrap();
    let host = random(n);
    input.copy_from_slice(&host);
    let (din, dout) = (gpu.alloc_zeroed::<f32>(n).unwrap(), gpu.alloc_zeroed::<f32>(n).unwrap());
    let chunk = n.div_ceil(8);
    gpu.scope(|s| {
        let streams: Vec<_> = (0..4).map(|_| s.stream()).collect::<Result<_, _>>()?;
        let pieces = input.view().chunks(chunk).zip(output.view_mut().chunks(chunk));
        for (k, (src, dst)) in pieces.enumerate() {
            let st = &streams[k % 4];
            let r = k * chunk..k * chunk + src.len();
            st.copy_h2d(src, din.slice(r.clone()))?;
            st.pipeline(din.slice(r.clone()), dout.slice(r.clone()), 10)?;
            st.copy_d2h(dout.slice(r), dst)?;
        }
        Ok(())
    })
    .unwrap();
    assert_pipeline(&output, &host, 10);
}

pub fn scope_after_and_fork_wait_for_earlier_work(gpu: &Device) {
    let origin = gpu.stream().unwrap();
    let flag = gpu.alloc_zeroed::<u32>(1).unwrap();
    let origin_done = Arc::new(AtomicBool::new(false));
    origin.spin_write(flag.view(), 1, SPIN).unwrap();
    let d = origin_done.clone();
    origin.on_host(move || d.store(true, Ordering::SeqCst)).unwrap();
    let saw = Arc::new(Mutex::new(Vec::new()));
    let mut host = gpu.pinned::<u32>(1).unwrap();
    gpu.scope_after(&origin, |s| {
        let st = s.stream()?;
        let (d, w) = (origin_done.clone(), saw.clone());
        st.on_host(move || w.lock().unwrap().push(d.load(Ordering::SeqCst)))?;
        let marker = Arc::new(AtomicBool::new(false));
        let m = marker.clone();
        st.spin_write(flag.view(), 2, SPIN)?;
        st.on_host(move || m.store(true, Ordering::SeqCst))?;
        let child = st.fork(s)?;
        let w = saw.clone();
        child.on_host(move || w.lock().unwrap().push(marker.load(Ordering::SeqCst)))?;
        child.copy_d2h(&flag, &mut host)?;
        Ok(())
    })
    .unwrap();
    assert_eq!(*saw.lock().unwrap(), vec![true, true], "a scoped stream ran before the work it should wait for");
    assert_eq!(host[0], 2);
}

pub fn priorities_are_reported_and_clamped(gpu: &Device) {
    let p = gpu.priorities();
    assert!(p.greatest <= p.least, "{p:?}");
    assert_eq!(gpu.stream().unwrap().priority(), p.low());
    assert_eq!(gpu.stream_with_priority(p.high()).unwrap().priority(), p.high());
    assert_eq!(gpu.stream_with_priority(p.greatest - 100).unwrap().priority(), p.high());
}

pub fn dropping_a_buffer_in_use_frees_it_after_the_use(gpu: &Device) {
    let st = gpu.stream().unwrap();
    let out = gpu.alloc_zeroed::<u32>(1).unwrap();
    for round in 0..20u32 {
        let tmp = gpu.alloc_zeroed::<u32>(1 << 20).unwrap();
        st.spin_write(tmp.view(), round, Duration::from_micros(200)).unwrap();
        st.copy_d2d(tmp.slice(0..1), &out).unwrap();
        drop(tmp); // freed after the copy, without a host wait
    }
    st.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![19]);
}

pub fn length_mismatches_are_errors(gpu: &Device) {
    let st = gpu.stream().unwrap();
    let (a, b) = (gpu.alloc_zeroed::<f32>(10).unwrap(), gpu.alloc_zeroed::<f32>(11).unwrap());
    assert!(matches!(st.copy_d2d(&a, &b), Err(Error::LengthMismatch { .. })));
    assert!(matches!(st.pipeline(a.view(), b.view(), 1), Err(Error::LengthMismatch { .. })));
    let pinned = gpu.pinned::<f32>(9).unwrap();
    let r = gpu.scope(|s| s.stream()?.copy_h2d(&pinned, &a));
    assert!(matches!(r, Err(Error::LengthMismatch { .. })));
    assert!(matches!(a.copy_from_slice(&[0.0; 3]), Err(Error::LengthMismatch { .. })));
}

/// `resident_pipeline` through the typed launch API, on fresh random inputs, in a grid
/// sized in threads (each thread strides over the array).
pub fn launches_of_the_builtin_pipeline_match_the_host(gpu: &Device) {
    let f = gpu.kernels().function::<PipelineParams>("resident_pipeline").unwrap();
    let st = gpu.stream().unwrap();
    for (n, iters) in [(1usize, 7u32), (1000, 0), (123_457, 25)] {
        let input = random(n);
        let x = gpu.alloc_from(&input).unwrap();
        let y = gpu.alloc_zeroed::<f32>(n).unwrap();
        let p = PipelineParams { input: x.device_ptr(), output: y.device_ptr(), len: n as u64, iters, _pad: 0 };
        // SAFETY: both addresses hold n floats, alive until the stream is synchronized.
        unsafe { st.launch(&f, LaunchConfig::for_elements(n as u32, 256), p) }.unwrap();
        st.synchronize().unwrap();
        assert_pipeline(&y.to_vec().unwrap(), &input, iters);
    }
}

/// A function typed by a parameter struct of the wrong size, or a name the image lacks,
/// is refused before any launch.
pub fn a_parameter_size_mismatch_is_refused(gpu: &Device) {
    let k = gpu.kernels();
    assert!(matches!(k.function::<[u64; 3]>("resident_pipeline"), Err(Error::Config(_))));
    assert!(matches!(k.function::<u32>("resident_spin_write"), Err(Error::Config(_))));
    assert!(k.function::<PipelineParams>("no_such_kernel").is_err());
    assert!(k.function::<resident::OneTaskParams>("resident_one_task").is_ok());
}

/// A cooperative launch of blocks with 64 KiB of shared memory each (above the 48 KiB a
/// GPU block gets without opting in), one per SM: the occupancy query counts them, the
/// launch runs them, and the kernel computes what the host does.
pub fn cooperative_launches_with_large_shared_memory(gpu: &Device) {
    let f = gpu.kernels().function::<PipelineParams>("resident_pipeline").unwrap();
    let smem = 64 * 1024;
    assert!(f.blocks_per_sm(64, smem).unwrap() >= 1, "a block of 64 KiB of shared memory does not fit an SM");
    let n = 50_000;
    let input = random(n);
    let x = gpu.alloc_from(&input).unwrap();
    let st = gpu.stream().unwrap();
    let p = PipelineParams { input: x.device_ptr(), output: x.device_ptr(), len: n as u64, iters: 3, _pad: 0 };
    // SAFETY: x holds n floats, alive until the stream is synchronized.
    unsafe { st.launch(&f, LaunchConfig::new(gpu.sm_count(), 64).shared_bytes(smem).cooperative(), p) }.unwrap();
    st.synchronize().unwrap();
    assert_pipeline(&x.to_vec().unwrap(), &input, 3);
}

/// Launches captured once into a graph, replayed twice: the graph runs them each time
/// (in place, so the second run sees the first's result).
pub fn captured_launches_replay(gpu: &Device) {
    let n = 10_000;
    let f = gpu.kernels().function::<PipelineParams>("resident_pipeline").unwrap();
    let st = gpu.stream().unwrap();
    let input = random(n);
    let x = gpu.alloc_from(&input).unwrap();
    let p = PipelineParams { input: x.device_ptr(), output: x.device_ptr(), len: n as u64, iters: 5, _pad: 0 };
    let graph = st
        .capture(|s| {
            // SAFETY: x holds n floats and outlives every replay (synchronized below).
            unsafe { s.launch(&f, LaunchConfig::for_elements(n as u32, 128), p) }?;
            unsafe { s.launch(&f, LaunchConfig::new(3, 64), p) }
        })
        .unwrap();
    st.synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), input, "a capture ran its launches");
    let mut want = input.clone();
    for _ in 0..2 {
        graph.launch(&st).unwrap();
        st.synchronize().unwrap();
        want = want.iter().map(|&v| element(element(v, 5), 5)).collect();
        assert_pipeline(&x.to_vec().unwrap(), &want, 0);
    }
}

/// Capturing what a graph cannot replay safely is refused with a typed error: a host
/// callback (its `FnOnce` would run at every replay) and pinned copies (the memory is
/// lent only for the scope; a graph may outlive it).
pub fn capture_refuses_callbacks_and_pinned_copies(gpu: &Device) {
    let dev = gpu.alloc_zeroed::<f32>(16).unwrap();
    let mut host = gpu.pinned::<f32>(16).unwrap();
    let st = gpu.stream().unwrap();
    assert!(matches!(st.capture(|s| s.on_host(|| ())), Err(Error::Config(_))));
    let up = gpu.scope(|s| {
        let st = s.stream()?;
        st.capture(|_| st.copy_h2d(&host, &dev)).map(|_| ())
    });
    assert!(matches!(up, Err(Error::Config(_))), "{up:?}");
    let down = gpu.scope(|s| {
        let st = s.stream()?;
        st.capture(|_| st.copy_d2h(&dev, &mut host)).map(|_| ())
    });
    assert!(matches!(down, Err(Error::Config(_))), "{down:?}");
    // The stream captures no more after a refused capture: its work runs.
    let flag = gpu.alloc_zeroed::<u32>(1).unwrap();
    st.spin_write(flag.view(), 5, Duration::ZERO).unwrap();
    st.synchronize().unwrap();
    assert_eq!(flag.to_vec().unwrap(), vec![5]);
}

/// A small launch to capture: `f` (`resident_pipeline`) over `x`, in place, 1 iteration.
///
/// # Safety
/// `x` must outlive every run of the launch (and of a graph that captures it).
unsafe fn launch_pipeline(s: &Stream, f: &Function<PipelineParams>, x: &DeviceBuffer<f32>) -> resident::Result<()> {
    let p = PipelineParams { input: x.device_ptr(), output: x.device_ptr(), len: x.len() as u64, iters: 1, _pad: 0 };
    // SAFETY: the caller's contract.
    unsafe { s.launch(f, LaunchConfig::for_elements(x.len() as u32, 128), p) }
}

/// A capture whose closure panics ends (on a GPU the stream would stay capturing, and
/// its later work would be captured instead of run), so the stream runs work and
/// captures again; and a scope is refused inside a capture (its end could not wait for
/// the capture of its own thread).
pub fn a_capture_that_panics_ends(gpu: &Device) {
    let st = gpu.stream().unwrap();
    let f = gpu.kernels().function::<PipelineParams>("resident_pipeline").unwrap();
    let flag = gpu.alloc_zeroed::<u32>(1).unwrap();
    let x = gpu.alloc_from(&[0.5f32; 1000]).unwrap();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        st.capture(|s| {
            // SAFETY: x outlives the stream's work (synchronized below).
            unsafe { launch_pipeline(s, &f, &x) }?;
            panic!("a panic inside a capture (expected by the test)")
        })
    }));
    assert!(panicked.is_err());
    st.spin_write(flag.view(), 3, Duration::ZERO).unwrap();
    st.synchronize().unwrap();
    assert_eq!(flag.to_vec().unwrap(), vec![3], "the stream still captures after a panic in a capture");
    assert_eq!(x.to_vec().unwrap(), vec![0.5; 1000], "the captured launch ran");
    // SAFETY: x outlives the graph's replay (synchronized below).
    let graph = st.capture(|s| unsafe { launch_pipeline(s, &f, &x) }).unwrap();
    graph.launch(&st).unwrap();
    st.synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![element(0.5, 1); 1000]);
    let nested = st.capture(|_| gpu.scope(|_| Ok(())));
    assert!(matches!(nested, Err(Error::Config(_))), "{nested:?}");
    st.synchronize().unwrap();
}

/// A scope's end waits for another thread's capture of a stream the scope adopted (a
/// GPU fails a synchronize of a capturing stream at once, which would end the scope's
/// borrows under its running download): the scope returns `Ok`, the capture succeeds,
/// and the download is complete.
pub fn a_scope_waits_for_another_threads_capture_of_its_stream(gpu: &Device) {
    let n = 1 << 20;
    let input = random(n);
    let dev = gpu.alloc_from(&input).unwrap();
    let x = gpu.alloc_from(&vec![0.25f32; 4096]).unwrap();
    let flag = gpu.alloc_zeroed::<u32>(1).unwrap();
    let mut host = gpu.pinned::<f32>(n).unwrap();
    let s = gpu.stream().unwrap();
    let f = gpu.kernels().function::<PipelineParams>("resident_pipeline").unwrap();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|threads| {
        let (s, x, f) = (&s, &x, &f);
        let capturer = threads.spawn(move || {
            go_rx.recv().unwrap();
            s.capture(|c| {
                started_tx.send(()).unwrap();
                // Long enough for the scope to reach its end meanwhile.
                std::thread::sleep(SPIN * 5);
                // SAFETY: x outlives the graph, which is never replayed.
                unsafe { launch_pipeline(c, f, x) }
            })
            .map(|_| ())
        });
        let r = gpu.scope(|sc| {
            let st = sc.adopt(s)?;
            st.spin_write(flag.view(), 1, SPIN)?;
            st.copy_d2h(&dev, &mut host)?;
            go_tx.send(()).unwrap();
            // The other thread captures `s` now; the scope ends while it does.
            started_rx.recv().unwrap();
            Ok(())
        });
        assert_eq!(r, Ok(()), "the scope's end did not wait for the capture");
        assert_eq!(capturer.join().unwrap(), Ok(()), "the capture was disturbed");
    });
    assert!(host[..] == input[..], "the scope ended before its download was complete");
    s.synchronize().unwrap();
}

/// Threads enqueue host callbacks on a stream while another thread captures it again
/// and again: a callback is either refused (a typed error: the stream captures, or is
/// about to) or runs exactly once, never as part of a graph; the graphs replay what
/// they captured.
pub fn callbacks_from_other_threads_are_never_captured(gpu: &Device) {
    let s = gpu.stream().unwrap();
    let f = gpu.kernels().function::<PipelineParams>("resident_pipeline").unwrap();
    let x = gpu.alloc_from(&[1.0f32; 256]).unwrap();
    let (accepted, ran, refused) = (AtomicU32::new(0), Arc::new(AtomicU32::new(0)), AtomicU32::new(0));
    let capturing = AtomicBool::new(true);
    let rounds = 100;
    std::thread::scope(|threads| {
        for _ in 0..4 {
            threads.spawn(|| {
                while capturing.load(Ordering::Relaxed) {
                    let ran = ran.clone();
                    match s.on_host(move || {
                        ran.fetch_add(1, Ordering::Relaxed);
                    }) {
                        Ok(()) => accepted.fetch_add(1, Ordering::Relaxed),
                        Err(Error::Config(_)) => refused.fetch_add(1, Ordering::Relaxed),
                        Err(e) => panic!("{e}"),
                    };
                    std::thread::yield_now();
                }
            });
        }
        for _ in 0..rounds {
            // SAFETY: x outlives every replay (synchronized below).
            let g = s.capture(|c| unsafe { launch_pipeline(c, &f, &x) }).unwrap();
            g.launch(&s).unwrap();
        }
        capturing.store(false, Ordering::Relaxed);
    });
    s.synchronize().unwrap();
    assert_eq!(ran.load(Ordering::Relaxed), accepted.load(Ordering::Relaxed), "a callback ran twice, or never");
    let want = (0..rounds).fold(1.0f32, |v, _| element(v, 1));
    assert_pipeline(&x.to_vec().unwrap(), &vec![want; 256], 0);
    eprintln!("{} callbacks ran, {} refused during a capture", accepted.load(Ordering::Relaxed), refused.load(Ordering::Relaxed));
}

/// A stream waits for a ticket's tasks (a spin, then axpys) before it copies their
/// output: the copy sees every task's write, and the stream's events span the spin.
/// `gpu` must be on the runtime's device (on a GPU, made before the runtime).
pub fn a_stream_follows_a_tickets_tasks(gpu: &Device, rt: &Runtime) {
    let n = 64 * 1024;
    let s = gpu.stream().unwrap();
    let (start, end) = (gpu.event().unwrap(), gpu.event().unwrap());
    let (xs, ys) = (random(n), random(n));
    let x = rt.buffer_from(&xs).unwrap();
    let y = rt.buffer_from(&ys).unwrap();
    let copy = gpu.alloc_zeroed::<f32>(n).unwrap();
    let f = gpu.kernels().function::<PipelineParams>("resident_pipeline").unwrap();
    // Reached before the tasks start (a CPU stream's thread may start late).
    s.record(&start).unwrap();
    start.synchronize().unwrap();
    // A spin of SPIN first, then axpy tasks: the stream must wait for all of them.
    let mut tasks = vec![Task::spin(SPIN.as_nanos() as u64)];
    tasks.extend((0..64).map(|i| Task::axpy(2.0, x.slice(i * 1024..(i + 1) * 1024), y.slice(i * 1024..(i + 1) * 1024))));
    let ticket = rt.submit(&tasks).unwrap();
    let done = ticket.record_event(&s).unwrap();
    // The runtime's y, copied by the stream (a 0-iteration pipeline) after the wait.
    let p = PipelineParams { input: y.raw_address(), output: copy.device_ptr(), len: n as u64, iters: 0, _pad: 0 };
    // SAFETY: y (n floats) and copy outlive the stream's work (synchronized below).
    unsafe { s.launch(&f, LaunchConfig::for_elements(n as u32, 256), p) }.unwrap();
    s.record(&end).unwrap();
    done.synchronize().unwrap();
    // The event completed only after every task did: the ticket is done without waiting.
    assert!(matches!(ticket.try_wait(), Some(Ok(()))), "the event completed before the tasks");
    s.synchronize().unwrap();
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(&x, &y)| 2.0 * x + y).collect();
    assert_eq!(copy.to_vec().unwrap(), want, "the stream's copy ran before the tasks' writes");
    assert_eq!(y.read().unwrap(), want);
    assert!(end.elapsed_since(&start).unwrap() >= SPIN, "the stream did not wait for the spin task");
    // A finished ticket needs no wait.
    s.wait_ticket(&ticket).unwrap();
    s.synchronize().unwrap();
}

/// `resident_one_task` launched with `Probe::one_task_params` computes what `submit`
/// computes, and writes the completion record `submit`'s workers would.
pub fn one_task_launches_match_submit(rt: &Runtime) {
    let n = 4096;
    let gpu = rt.device().unwrap();
    let f = rt.module().unwrap().function::<resident::OneTaskParams>("resident_one_task").unwrap();
    let (xs, ys) = (random(n), random(n));
    let x = rt.buffer_from(&xs).unwrap();
    let (y_launch, y_submit) = (rt.buffer_from(&ys).unwrap(), rt.buffer_from(&ys).unwrap());
    let records = gpu.alloc_zeroed::<Completion>(2).unwrap();
    let s = gpu.stream().unwrap();
    for (i, (lo, hi)) in [(0, n / 2), (n / 2, n)].into_iter().enumerate() {
        let t = Task::axpy(-1.5, x.slice(lo..hi), y_launch.slice(lo..hi));
        let p = rt.probe().one_task_params(&t, 7 + i as u32, records.device_ptr() + (i * size_of::<Completion>()) as u64).unwrap();
        // SAFETY: the task was checked against the runtime's live buffers, which outlive
        // the launch (synchronized below); the record is one of `records`.
        unsafe { s.launch(&f, LaunchConfig::new(1, 32), p) }.unwrap();
    }
    s.synchronize().unwrap();
    let tasks: Vec<Task> =
        [(0, n / 2), (n / 2, n)].iter().map(|&(lo, hi)| Task::axpy(-1.5, x.slice(lo..hi), y_submit.slice(lo..hi))).collect();
    rt.submit(&tasks).unwrap().wait().unwrap();
    assert_eq!(y_launch.read().unwrap(), y_submit.read().unwrap());
    for (i, c) in records.to_vec().unwrap().iter().enumerate() {
        assert_eq!(c.status, 0, "record {i}: {c:?}");
        assert_eq!(c.stamp, 7 + i as u32 + 1, "record {i} is not the one of sequence number {}", 7 + i);
    }
    // A task submit would refuse is refused here too.
    let bad = Task::axpy(1.0, x.slice(0..8), y_launch.slice(0..16));
    assert!(matches!(rt.probe().one_task_params(&bad, 0, records.device_ptr()), Err(Error::InvalidTask { .. })));
}
