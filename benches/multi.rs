//! Several devices: tiny-task throughput of one runtime per device against
//! one runtime alone, and the latency of a follow-up task pushed from one device's task
//! into another device's runtime through a link, against the host relaying it by hand.
//! All in one run, medians after warm-up.
//!
//!     cargo bench --bench multi        # on a machine with two GPUs (or staged by tools/gpu/pack.sh)
//!
//! Without two CUDA devices it runs on CPU runtimes labelled as devices (figures that
//! say nothing about GPUs; the run checks that the bench works). `MULTI_DEVICES=n`
//! uses n devices (default: every device, at least 2).
//!
//! Rows:
//! - a resident list of 20,000 noops submitted 100 times on each runtime at once (one
//!   host thread per runtime), against the same on one runtime;
//! - host-fed stream of 2^21 noops in batches of 4096 (one producer thread per runtime),
//!   against one runtime with one producer;
//! - NCCL all-reduce of the runtimes' buffers (1 MiB to 512 MiB), with the bus
//!   bandwidth nccl-tests would report for it (tools/gpu/nccl_torch.py measures
//!   PyTorch's NCCL all-reduce the same way, for comparison in the same call);
//! - round trip: a task on device 0 pushes a mark task into device 1's runtime through a
//!   link, submit to the mark's completion as the link's forwarder sees it; against the host
//!   relay by hand (submit a noop to device 0, wait, submit the mark to device 1, wait).

mod common;

use common::{median_of, percentiles, samples, stream_batches};
use criterion::{Criterion, criterion_group, criterion_main};
use resident::{Link, Runtime, RuntimeConfig, Task};
use std::time::{Duration, Instant};

const LIST: usize = 20_000;
const LISTS: usize = 100;
const TINY: usize = 1 << 21;
const BATCH: usize = 4096;
const WARMUP: usize = 200;
const SAMPLES: usize = 2000;

fn config(device: usize, cuda: bool) -> RuntimeConfig {
    let base = if cuda { RuntimeConfig::cuda() } else { RuntimeConfig { cpu_workers: 2, ..RuntimeConfig::cpu() } };
    RuntimeConfig { device, capacity: 1 << 16, residency: resident::Residency::Always, ..base }
}

/// Every runtime runs `f` at once, one thread each, started together at a barrier;
/// the time from the first thread's start to the last one's end (the threads' own
/// start-up is not in it).
fn all_at_once(rts: &[Runtime], f: impl Fn(&Runtime) + Sync) -> Duration {
    let barrier = std::sync::Barrier::new(rts.len());
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|s| {
        let hs: Vec<_> = rts
            .iter()
            .map(|rt| {
                let (f, barrier) = (&f, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    f(rt);
                    (start, Instant::now())
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let first = spans.iter().map(|s| s.0).min().unwrap();
    let last = spans.iter().map(|s| s.1).max().unwrap();
    last - first
}

fn bench(c: &mut Criterion) {
    let gpus = if resident::cuda_available() { resident::device_count() } else { 0 };
    let cuda = gpus >= 2;
    let n = std::env::var("MULTI_DEVICES").ok().and_then(|v| v.parse().ok()).unwrap_or(if cuda { gpus } else { 2 });
    let rts: Vec<Runtime> = (0..n).map(|d| Runtime::with_config(config(d, cuda)).unwrap()).collect();
    println!("\nmulti-device: {} runtimes on {}", n, rts.iter().map(|r| r.backend().name.clone()).collect::<Vec<_>>().join(", "));

    // Resident lists: LISTS submissions of the list back to back per runtime (so the
    // threads' start is amortized), waited for at the end.
    let lists: Vec<_> = rts.iter().map(|rt| rt.upload_tasks(&(0..LIST as u64).map(Task::noop).collect::<Vec<_>>()).unwrap()).collect();
    let run_lists = |rt: &Runtime| {
        let i = rts.iter().position(|r| std::ptr::eq(r, rt)).unwrap();
        let tickets: Vec<_> = (0..LISTS).map(|_| lists[i].submit().unwrap()).collect();
        tickets.into_iter().for_each(|t| t.wait().unwrap());
    };
    let one = median_of(|| all_at_once(&rts[..1], run_lists), 2, 9);
    let all = median_of(|| all_at_once(&rts, run_lists), 2, 9);
    let (r1, rn) = ((LISTS * LIST) as f64 / one.as_secs_f64() / 1e6, (n * LISTS * LIST) as f64 / all.as_secs_f64() / 1e6);
    println!(
        "{LISTS} lists of {LIST} noops, one runtime          {:>9.1} us per list  {:>8.1} M tasks/s",
        one.as_secs_f64() * 1e6 / LISTS as f64,
        r1
    );
    println!(
        "{LISTS} lists of {LIST} noops on each of {n} at once  {:>9.1} us per list  {:>8.1} M tasks/s  ({:.2}x one)",
        all.as_secs_f64() * 1e6 / LISTS as f64,
        rn,
        rn / r1
    );

    // Host-fed streams, one producer per runtime.
    let tiny: Vec<Task> = (0..TINY as u64).map(Task::noop).collect();
    let one = median_of(|| all_at_once(&rts[..1], |rt| stream_batches(rt, BATCH, &tiny)), 1, 5);
    let share = &tiny[..TINY / n];
    let all = median_of(|| all_at_once(&rts, |rt| stream_batches(rt, BATCH, share)), 1, 5);
    let (r1, rn) = (TINY as f64 / one.as_secs_f64() / 1e6, (share.len() * n) as f64 / all.as_secs_f64() / 1e6);
    println!("stream, batch {BATCH}, one runtime, 1 producer   {:>8.1} M tasks/s", r1);
    println!("stream, batch {BATCH}, {n} runtimes, 1 producer each {:>8.1} M tasks/s  ({:.2}x one)", rn, rn / r1);

    // Cross-device follow-up: through a link, against the host relaying by hand.
    let (a, b) = (&rts[0], &rts[1]);
    let link = Link::new(a, b).unwrap();
    let marks = b.buffer::<u32>(1).unwrap();
    let push = Task::forward(link.id(), marks.all(), 0, 1);
    // Submit to the pushed task's completion on the other runtime, as the forwarder
    // sees it (it retires the other side's tickets): the first task's own ticket is
    // not waited for.
    let mut via_link = samples(
        || {
            let before = link.completed();
            drop(a.submit(&[push]).unwrap());
            while link.completed() == before {
                std::hint::spin_loop();
            }
        },
        WARMUP,
        SAMPLES,
    );
    link.flush().unwrap();
    // The same through a peer link (into the other device's inbox, its relay pops), on
    // CUDA devices with peer access.
    let peer = Link::peer(a, b).ok();
    let mut via_peer = match &peer {
        Some(pl) => {
            let push = Task::forward(pl.id(), marks.all(), 0, 1);
            samples(
                || {
                    let before = pl.completed();
                    drop(a.submit(&[push]).unwrap());
                    while pl.completed() == before {
                        std::hint::spin_loop();
                    }
                },
                WARMUP,
                SAMPLES,
            )
        }
        None => Vec::new(),
    };
    if let Some(pl) = &peer {
        pl.flush().unwrap();
        // What one look at a peer link's counts costs (two synchronous device reads):
        // the loop above pays up to one of these after the task completes.
        let mut looks = samples(
            || {
                std::hint::black_box(pl.stats());
            },
            WARMUP,
            SAMPLES,
        );
        let p = percentiles(&mut looks, &[50.0]);
        println!("\npeer link: one stats() call (two device reads) {:.2} us p50; completed() reads host memory", p[0]);
    }
    let mark = Task::mark(marks.all(), 0);
    let mut by_hand = samples(
        || {
            a.submit(&[Task::noop(1)]).unwrap().wait().unwrap();
            b.submit(&[mark]).unwrap().wait().unwrap();
        },
        WARMUP,
        SAMPLES,
    );
    let mut one_rt = samples(|| b.submit(&[mark]).unwrap().wait().unwrap(), WARMUP, SAMPLES);
    let want = (WARMUP + SAMPLES) as u32 * if peer.is_some() { 4 } else { 3 };
    assert_eq!(marks.read().unwrap()[0], want, "every mark ran once");
    let ps = [50.0, 90.0, 99.0];
    println!("\nfollow-up task on another device, {SAMPLES} samples, microseconds    p50      p90      p99");
    if !via_peer.is_empty() {
        let p = percentiles(&mut via_peer, &ps);
        println!("{:<44} {:>8.2} {:>8.2} {:>8.2}", "peer link (device push into the other's inbox)", p[0], p[1], p[2]);
    }
    for (label, s) in [
        ("link (device push, host forwarder)", &mut via_link),
        ("host relay by hand (wait, submit)", &mut by_hand),
        ("one task on the second runtime", &mut one_rt),
    ] {
        let p = percentiles(s, &ps);
        println!("{label:<44} {:>8.2} {:>8.2} {:>8.2}", p[0], p[1], p[2]);
    }
    // Throughput: 256 forward tasks of 256 pushes each (65,536 marks on the other
    // device) through each link, submit to the last completion; medians of 5.
    let burst_marks = b.buffer::<u32>(1 << 16).unwrap();
    let burst = |l: &resident::Link| -> f64 {
        let tasks: Vec<Task> = (0..256u32).map(|i| Task::forward(l.id(), burst_marks.all(), i * 256, 256)).collect();
        let t = median_of(
            || {
                let start = Instant::now();
                a.submit(&tasks).unwrap().wait().unwrap();
                l.flush().unwrap();
                start.elapsed()
            },
            1,
            5,
        );
        (1u64 << 16) as f64 / t.as_secs_f64() / 1e6
    };
    println!("\ncross-device pushes, 65,536 per burst (256 tasks x 256), M pushes/s (submit to flush)");
    println!("{:<44} {:>8.2}", "link (host forwarder)", burst(&link));
    if let Some(pl) = &peer {
        println!("{:<44} {:>8.2}", "peer link", burst(pl));
    }
    assert!(burst_marks.read().unwrap().iter().all(|&v| v == if peer.is_some() { 12 } else { 6 }), "every burst mark ran once per burst");
    let stats = link.close().unwrap();
    println!("link: {stats:?}");
    if let Some(pl) = peer {
        println!("peer link: {:?}", pl.close().unwrap());
    }

    if cuda {
        nccl_rows(&rts);
    }

    let mut g = c.benchmark_group("multi");
    g.bench_function("lists_each_runtime", |bch| bch.iter(|| all_at_once(&rts, run_lists)));
    g.finish();
    drop(lists);
    drop(marks);
    for rt in rts {
        rt.close().unwrap();
    }
}

/// NCCL all-reduce (sum, f32, in place) of the runtimes' buffers, one rank per runtime,
/// each from its own thread: median time per call (its stream synchronized), algorithm
/// and bus bandwidth as nccl-tests computes them (bus = alg x 2(n-1)/n).
fn nccl_rows(rts: &[Runtime]) {
    let refs: Vec<&Runtime> = rts.iter().collect();
    let mut comms = match resident::nccl::Communicator::for_runtimes(&refs) {
        Ok(c) => c,
        Err(e) => {
            println!("\nNCCL: not measured ({e})");
            return;
        }
    };
    let n = rts.len() as f64;
    println!("\nNCCL all-reduce of runtime buffers, {} ranks, f32 sum in place       bytes      us    algbw GB/s  busbw GB/s", rts.len());
    for bytes in [1usize << 20, 16 << 20, 128 << 20, 512 << 20] {
        let bufs: Vec<_> = rts.iter().map(|rt| rt.buffer_from(&vec![1.0f32; bytes / 4]).unwrap()).collect();
        let times: Vec<Duration> = std::thread::scope(|s| {
            let hs: Vec<_> = comms
                .iter_mut()
                .zip(&bufs)
                .map(|(c, b)| {
                    s.spawn(move || {
                        let mut t = Vec::new();
                        for i in 0..25 {
                            let start = Instant::now();
                            c.all_reduce(b, resident::nccl::ReduceOp::Sum).unwrap();
                            if i >= 5 {
                                t.push(start.elapsed());
                            }
                        }
                        t.sort();
                        t[t.len() / 2]
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let t = times.into_iter().max().unwrap().as_secs_f64();
        let alg = bytes as f64 / t / 1e9;
        println!("{:<66} {:>10} {:>8.1} {:>10.1} {:>11.1}", "", bytes, t * 1e6, alg, alg * 2.0 * (n - 1.0) / n);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
