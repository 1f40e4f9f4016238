//! Streaming throughput while the host keeps feeding the running kernel: host threads
//! (1 and 4) submit batches of tiny tasks back to back, with a few tickets in flight
//! each, into one resident kernel. Against the rival a CUDA programmer writes for the
//! same shape (each thread: per batch, records into a ring of pinned slots, one async
//! copy and one launch over the batch's table on its own stream, a slot reused after
//! the event behind it: `common::streaming_rival`), and, for scale, one launch per task
//! and CUDA Graph replay of the same tasks, in the same run. And memory-bound tasks (axpy on 16 Ki floats,
//! 192 KiB moved each, over 512 MiB of data: far more than the 50 MB L2) streamed the
//! same way, against the device's copy bandwidth.
//!
//! Timing: host wall clock from the first submit to the last completion seen, after a
//! warm-up pass; medians of several passes.
//!
//!     cargo bench --bench streaming        # on a GPU machine (or staged by tools/gpu/pack.sh)

mod common;

use common::baselines::Baselines;
use common::streaming_rival::StreamingRival;
use common::{median, stream_batches};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use resident::{Runtime, RuntimeConfig, Task};
use std::time::Duration;

/// Tiny tasks per pass (all threads together).
const TINY: usize = 1 << 21;
/// Floats per memory-bound task, and tasks per pass.
const BIG_SLICE: usize = 1 << 14;
const BIG_TASKS: usize = 1 << 15;
const BIG_SLOTS: usize = 4096;
/// Tasks per batch of the memory-bound stream.
const BIG_BATCH: usize = 1024;
/// Bytes a memory-bound pass moves: read x, read y, write y.
const BIG_BYTES: u64 = (BIG_TASKS * BIG_SLICE * 4 * 3) as u64;

/// `threads` producers each submit their share of `tasks` ([`stream_batches`]); when
/// each producer finished, from the start (the pass lasts as long as the slowest).
/// Producer `t` runs on CPU `pin[t % pin.len()]` where `pin` is not empty.
fn stream(rt: &Runtime, threads: usize, batch: usize, tasks: &[Task], pin: &[usize]) -> Vec<Duration> {
    let share = tasks.len() / threads;
    let start = std::time::Instant::now();
    std::thread::scope(|s| {
        let producers: Vec<_> = (0..threads)
            .map(|t| {
                let mine = &tasks[t * share..(t + 1) * share];
                let cpu = (!pin.is_empty()).then(|| pin[t % pin.len()]);
                s.spawn(move || {
                    if let Some(cpu) = cpu {
                        pin_to(cpu);
                    }
                    stream_batches(rt, batch, mine);
                    start.elapsed()
                })
            })
            .collect();
        producers.into_iter().map(|p| p.join().unwrap()).collect()
    })
}

/// Binds the calling thread to CPU `cpu` (Linux; elsewhere, nothing).
fn pin_to(cpu: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: `set` is a zeroed, then filled, `cpu_set_t` that lives across the call,
    // and its size is passed; pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let rc = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        assert_eq!(rc, 0, "sched_setaffinity to CPU {cpu}: {}", std::io::Error::last_os_error());
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

fn rate(tasks: usize, t: Duration) -> f64 {
    tasks as f64 / t.as_secs_f64() / 1e6
}

fn bench(c: &mut Criterion) {
    let cuda = resident::cuda_available();
    // STREAMING_COPY=1: staging + copies (the publication before the relay's runs).
    let relay_publish = std::env::var_os("STREAMING_COPY").is_none();
    // STREAMING_HELPERS_SLEEP=1: the helpers of batches of 4096 sleep between passes
    // (`submit_spin` zero).
    let submit_spin = std::env::var_os("STREAMING_HELPERS_SLEEP").map(|_| Duration::ZERO);
    // STREAMING_FULL_RECORDS=1: 64-byte records only (`compact_records` off).
    let compact_records = std::env::var_os("STREAMING_FULL_RECORDS").is_none();
    // STREAMING_PARTNERS=n: `submit_partners` (0: none).
    let submit_partners = std::env::var("STREAMING_PARTNERS").ok().and_then(|v| v.parse().ok());
    // STREAMING_PIN="0,2,4,6": producer t runs on the t-th of these CPUs (round robin);
    // to tell the VM's shared cores from the runtime's own scaling.
    let pin: Vec<usize> =
        std::env::var("STREAMING_PIN").map(|v| v.split(',').filter_map(|c| c.trim().parse().ok()).collect()).unwrap_or_default();
    let config =
        RuntimeConfig { capacity: 1 << 16, relay_publish, submit_spin, compact_records, submit_partners, ..RuntimeConfig::default() };
    let rt = Runtime::with_config(config).unwrap();
    eprintln!(
        "{} (relay publishes runs: {relay_publish}; compact records: {compact_records}; partners: {submit_partners:?}; producers on CPUs {pin:?})",
        rt.backend()
    );
    // The CPU backend (no GPU here) streams a sixteenth as many.
    let tiny = if cuda { TINY } else { TINY / 16 };
    let noop: Vec<Task> = (0..tiny as u64).map(Task::noop).collect();
    let mut rows: Vec<(String, f64)> = vec![];
    // (threads, batch, M tasks/s) of the persistent rows, for the rival's ratios.
    let mut persistent: Vec<(usize, usize, f64)> = vec![];
    // STREAMING_ROWS="2x256,8x256": these producer x batch rows instead of the six below.
    let shapes: Vec<(usize, usize)> = match std::env::var("STREAMING_ROWS") {
        Ok(v) => v.split(',').filter_map(|r| r.split_once('x')).filter_map(|(t, b)| Some((t.parse().ok()?, b.parse().ok()?))).collect(),
        Err(_) => vec![(1, 256), (1, 1024), (1, 4096), (4, 256), (4, 1024), (4, 4096)],
    };
    for (threads, batch) in shapes {
        let mut g = c.benchmark_group("stream_noop");
        g.throughput(Throughput::Elements(tiny as u64));
        g.sample_size(10);
        g.bench_function(BenchmarkId::new(format!("persistent_{threads}_threads"), batch), |b| {
            b.iter(|| stream(&rt, threads, batch, &noop, &pin))
        });
        g.finish();
        #[cfg(feature = "phase-timing")]
        resident::__phases_take();
        let mut ends = vec![];
        let t = median(|| ends.push(stream(&rt, threads, batch, &noop, &pin)), 1, 7);
        // How evenly the producers were served: each pass's first and last finish.
        if threads > 1 {
            let spread: Vec<String> = ends
                .iter()
                .map(|e| format!("{:.2}-{:.2}", e.iter().min().unwrap().as_secs_f64() * 1e3, e.iter().max().unwrap().as_secs_f64() * 1e3))
                .collect();
            eprintln!("{threads} x {batch}: producers finished at (ms, first-last): {}", spread.join(", "));
        }
        rows.push((format!("persistent, {threads} thread(s), batches of {batch}"), rate(tiny, t)));
        persistent.push((threads, batch, rate(tiny, t)));
        // Where the submitting threads' time went in those passes (profiling builds).
        #[cfg(feature = "phase-timing")]
        eprintln!("phases, {threads} thread(s) x {batch}:\n{}", resident::__phases_take());
    }
    if !cuda {
        print(&rows, None);
        return;
    }
    // Memory-bound tasks, streamed from one thread.
    let x = rt.buffer_from(&vec![1.0f32; BIG_SLOTS * BIG_SLICE]).unwrap();
    let y = rt.buffer_from(&vec![0.5f32; BIG_SLOTS * BIG_SLICE]).unwrap();
    let big: Vec<Task> = (0..BIG_TASKS)
        .map(|i| {
            let s = (i % BIG_SLOTS) * BIG_SLICE..(i % BIG_SLOTS + 1) * BIG_SLICE;
            Task::axpy(1e-6, x.slice(s.clone()), y.slice(s))
        })
        .collect();
    let mut g = c.benchmark_group("stream_axpy_16k");
    g.throughput(Throughput::Bytes(BIG_BYTES));
    g.sample_size(10);
    g.bench_function("persistent_1_thread", |b| b.iter(|| stream(&rt, 1, BIG_BATCH, &big, &pin)));
    g.finish();
    let axpy_t = median(|| drop(stream(&rt, 1, BIG_BATCH, &big, &pin)), 1, 7);

    // Baselines, with the persistent kernel stopped.
    rt.close().unwrap();
    let n = 20_000;
    let base = Baselines::new(&rt, n).unwrap();
    let launches = base.prepare(&rt, &noop[..n]).unwrap();
    let graph = base.capture_graph(&launches, false).unwrap();
    let (src, dst) = base.copy_buffers(BIG_BYTES as usize / 2).unwrap();
    let mut g = c.benchmark_group("stream_noop");
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(10);
    g.bench_function("launch_per_task_20k", |b| b.iter(|| base.launch_per_task(&launches, false).unwrap()));
    g.bench_function("graph_replay_20k", |b| b.iter(|| base.replay(&graph).unwrap()));
    g.finish();
    let launch = rate(n, median(|| base.launch_per_task(&launches, false).unwrap(), 2, 11));
    let graph_rate = rate(n, median(|| base.replay(&graph).unwrap(), 2, 11));
    let copy_t = median(|| base.copy(&src, &dst).unwrap(), 3, 21);
    rows.push(("one launch per task (20k)".into(), launch));
    rows.push(("CUDA Graph replay (20k launches)".into(), graph_rate));
    print(&rows, Some(graph_rate));
    // The rival, shape by shape: the same tasks per pass, in the same batches.
    println!("\nagainst the rival (per batch: pinned slot, async copy, one launch over the table), M tasks/s");
    println!("{:<36} {:>11} {:>9} {:>9}", "threads x batch", "persistent", "rival", "x rival");
    for &(threads, batch, mine) in &persistent {
        let mut rival = StreamingRival::new(&rt, threads, &noop[..batch]).unwrap();
        let batches = tiny / (threads * batch);
        let mut g = c.benchmark_group("stream_noop_rival");
        g.throughput(Throughput::Elements((batches * threads * batch) as u64));
        g.sample_size(10);
        g.bench_function(BenchmarkId::new(format!("copy_launch_per_batch_{threads}_threads"), batch), |b| {
            b.iter(|| rival.run(batches).unwrap())
        });
        g.finish();
        let t = median(
            || {
                rival.run(batches).unwrap();
            },
            1,
            7,
        );
        let theirs = rate(batches * threads * batch, t);
        println!("{:<36} {mine:>11.1} {theirs:>9.1} {:>8.2}x", format!("{threads} x {batch}"), mine / theirs);
    }
    let gbs = |t: Duration| BIG_BYTES as f64 / t.as_secs_f64() / 1e9;
    println!(
        "axpy 16Ki floats x {BIG_TASKS}, host-fed from 1 thread in batches of {BIG_BATCH}: {:.0} GB/s; device copy of the same bytes: {:.0} GB/s; ratio {:.2}",
        gbs(axpy_t),
        gbs(copy_t),
        copy_t.as_secs_f64() / axpy_t.as_secs_f64()
    );
}

fn print(rows: &[(String, f64)], graph: Option<f64>) {
    println!("\nstreaming noop tasks, millions of tasks per second");
    for (label, r) in rows {
        match graph {
            Some(g) => println!("{label:<45} {r:>8.2}   {:>7.1}x graph", r / g),
            None => println!("{label:<45} {r:>8.2}"),
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
