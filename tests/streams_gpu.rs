//! GPU tests of `resident::stream`: ordering between streams, host callbacks, event
//! timing, the scoped copy pipeline. All need a CUDA GPU and fail (never pass) without
//! one:
//!
//!     cargo test --release --test streams_gpu -- --include-ignored --test-threads=1

use resident::stream::Gpu;
use resident_device::kernels::pipeline::element;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SPIN: Duration = Duration::from_millis(20);

fn gpu() -> Gpu {
    Gpu::first().expect("these tests need a CUDA GPU (and a build with PTX)")
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_write_on_one_stream_is_seen_by_another_through_the_inserted_wait() {
    let gpu = gpu();
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn wait_event_orders_one_stream_after_another() {
    let gpu = gpu();
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn wait_stream_orders_one_stream_after_another() {
    let gpu = gpu();
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn callbacks_run_in_stream_order() {
    let gpu = gpu();
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn events_time_a_known_spin() {
    let gpu = gpu();
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
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn to_vec_waits_for_a_pending_write() {
    let gpu = gpu();
    let st = gpu.stream().unwrap();
    let flag = gpu.alloc_zeroed::<u32>(1).unwrap();
    st.spin_write(flag.view(), 9, SPIN).unwrap();
    assert_eq!(flag.to_vec().unwrap(), vec![9]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn chunked_scoped_pipeline_matches_the_host() {
    let gpu = gpu();
    let n = (1 << 22) + 123;
    let mut input = gpu.pinned_write_combined::<f32>(n).unwrap();
    let mut output = gpu.pinned::<f32>(n).unwrap();
    let host: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.01).collect();
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
    for (i, (&o, &x)) in output.iter().zip(&host).enumerate() {
        let want = element(x, 10);
        assert!((o - want).abs() <= 1e-6 * want.abs().max(1.0), "element {i}: {o} != {want}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn scope_after_and_fork_wait_for_earlier_work() {
    let gpu = gpu();
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn priorities_are_reported_and_clamped() {
    let gpu = gpu();
    let p = gpu.priorities();
    assert!(p.greatest <= p.least, "{p:?}");
    assert_eq!(gpu.stream().unwrap().priority(), p.low());
    assert_eq!(gpu.stream_with_priority(p.high()).unwrap().priority(), p.high());
    assert_eq!(gpu.stream_with_priority(p.greatest - 100).unwrap().priority(), p.high());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dropping_a_buffer_in_use_frees_it_after_the_use() {
    let gpu = gpu();
    let st = gpu.stream().unwrap();
    let out = gpu.alloc_zeroed::<u32>(1).unwrap();
    for round in 0..20u32 {
        let tmp = gpu.alloc_zeroed::<u32>(1 << 20).unwrap();
        st.spin_write(tmp.view(), round, Duration::from_micros(200)).unwrap();
        st.copy_d2d(tmp.slice(0..1), &out).unwrap();
        drop(tmp); // freed in stream order after the copy, without a host wait
    }
    st.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![19]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn length_mismatches_are_errors() {
    let gpu = gpu();
    let st = gpu.stream().unwrap();
    let (a, b) = (gpu.alloc_zeroed::<f32>(10).unwrap(), gpu.alloc_zeroed::<f32>(11).unwrap());
    assert!(matches!(st.copy_d2d(&a, &b), Err(resident::Error::LengthMismatch { .. })));
    assert!(matches!(st.pipeline(a.view(), b.view(), 1), Err(resident::Error::LengthMismatch { .. })));
    let pinned = gpu.pinned::<f32>(9).unwrap();
    let r = gpu.scope(|s| s.stream()?.copy_h2d(&pinned, &a));
    assert!(matches!(r, Err(resident::Error::LengthMismatch { .. })));
}

// Issue 6, item 5: the persistent runtime and streams together.

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_stream_follows_a_tickets_tasks() {
    use resident::{Runtime, RuntimeConfig, Task};
    // The Gpu first: its module is loaded before the persistent kernel is resident.
    let gpu = gpu();
    let rt = Runtime::with_config(RuntimeConfig::cuda()).expect("a CUDA GPU");
    let s = gpu.stream().unwrap();
    let (start, end) = (gpu.event().unwrap(), gpu.event().unwrap());
    let x = rt.buffer_from(&vec![1.5f32; 64 * 1024]).unwrap();
    let y = rt.buffer_from(&vec![0.25f32; 64 * 1024]).unwrap();
    s.record(&start).unwrap();
    // A spin of SPIN first, then axpy tasks: the stream must wait for all of them.
    let mut tasks = vec![Task::spin(SPIN.as_nanos() as u64)];
    tasks.extend((0..64).map(|i| Task::axpy(2.0, x.slice(i * 1024..(i + 1) * 1024), y.slice(i * 1024..(i + 1) * 1024))));
    let ticket = rt.submit(&tasks).unwrap();
    let done = ticket.record_event(&s).unwrap();
    s.record(&end).unwrap();
    done.synchronize().unwrap();
    // The event completed only after every task did: the ticket is done without waiting.
    assert!(matches!(ticket.try_wait(), Some(Ok(()))), "the event completed before the tasks");
    assert!(y.read().unwrap().iter().all(|&v| v == 3.25));
    end.synchronize().unwrap();
    assert!(end.elapsed_since(&start).unwrap() >= SPIN, "the stream did not wait for the spin task");
    // A finished ticket needs no wait.
    s.wait_ticket(&ticket).unwrap();
    s.synchronize().unwrap();
    // Stop the persistent kernel before the `Gpu` goes: unloading its module waits for
    // the context's kernels, and a resident one never ends (docs/streams.md).
    drop(ticket);
    rt.shutdown().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_runtime_copies_on_a_lent_stream() {
    use resident::{Runtime, RuntimeConfig, Task};
    let gpu = gpu();
    let high = gpu.priorities().high();
    let rt = Runtime::with_transfer_stream(RuntimeConfig::cuda(), gpu.stream_with_priority(high).unwrap()).expect("a CUDA GPU");
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
