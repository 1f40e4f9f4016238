//! Round-trip latency of one tiny task: submit it into the running persistent kernel
//! and see its completion on the host, against a kernel launch plus stream
//! synchronize, and against replaying a one-launch CUDA Graph plus synchronize. All in
//! one run, on the same device code (`noop`).
//!
//! Timing: host wall clock around each round trip (it ends synchronized: the host saw
//! the completion, or the stream finished), 2,000 warm-up round trips, then 20,000
//! samples; p50, p90, p99 and p99.9 in a summary after criterion's groups.
//!
//!     cargo bench --bench latency          # on a GPU machine (or staged by tools/gpu/pack.sh)

mod common;

use common::baselines::Baselines;
use common::{percentiles, samples};
use criterion::{Criterion, criterion_group, criterion_main};
use resident::{Runtime, RuntimeConfig, Task};

const WARMUP: usize = 2_000;
const SAMPLES: usize = 20_000;
const PS: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

fn round_trip(rt: &Runtime, i: u64) {
    rt.submit(&[Task::noop(i)]).unwrap().wait().unwrap();
}

/// The blocking round trip's samples (after the warm-up).
fn round_trips(rt: &Runtime) -> Vec<std::time::Duration> {
    let mut i = 0;
    samples(
        || {
            i += 1;
            round_trip(rt, i)
        },
        WARMUP,
        SAMPLES,
    )
}

fn bench(c: &mut Criterion) {
    let cuda = resident::cuda_available();
    let mut rows = vec![];
    // The default (small batches through the relay warp), then publication by copies
    // on the transfer stream only; the CPU backend has no relay.
    // Then variants of the relay configuration, to see where the time goes.
    let d = RuntimeConfig { capacity: 1 << 12, ..RuntimeConfig::default() };
    // LATENCY_FLAGS_AB="a,b" (worker_flags bits, e.g. "4,12"): the blocking round trip
    // of the relay's runtime with each, alternated 4 times, table only (an A/B of a
    // worker policy in one process: the same host, card and moment).
    if let Ok(ab) = std::env::var("LATENCY_FLAGS_AB") {
        let flags: Vec<u32> =
            ab.split(',').map(|f| f.trim().parse().unwrap_or_else(|_| panic!("LATENCY_FLAGS_AB: {f:?} is not a number"))).collect();
        for round in 0..4 {
            for &worker_flags in &flags {
                let rt = Runtime::with_config(RuntimeConfig { worker_flags, ..d.clone() }).unwrap();
                let p = percentiles(&mut round_trips(&rt), &PS);
                println!(
                    "flags {worker_flags:#x} round {round}: submit + wait {}",
                    p.iter().map(|v| format!("{v:.2}")).collect::<Vec<_>>().join(" ")
                );
                rt.close().unwrap();
            }
        }
        return;
    }
    let configs: Vec<(&str, RuntimeConfig)> = if cuda {
        vec![
            ("relay", d.clone()),
            // Not inline: a run over the host ring, published by the relay.
            ("run", RuntimeConfig { relay_max_batch: 0, ..d.clone() }),
            // Staging, then a copy of the slot and `tail` by a stream write where the
            // driver takes one (host/driver/memops.rs) ...
            ("copy", RuntimeConfig { relay_max_batch: 0, relay_publish: false, ..d.clone() }),
            // ... or by copies of the slot and of `tail` (the path before runs).
            ("copy, no memops", RuntimeConfig { relay_max_batch: 0, relay_publish: false, stream_memops: false, ..d.clone() }),
            ("relay, poll sleep <= 128 ns", RuntimeConfig { max_poll_sleep_ns: 128, ..d.clone() }),
            ("relay, poll sleep <= 512 ns", RuntimeConfig { max_poll_sleep_ns: 512, ..d.clone() }),
            ("relay, 1 block/SM, sleep <= 128 ns", RuntimeConfig { max_blocks_per_sm: 1, max_poll_sleep_ns: 128, ..d.clone() }),
        ]
    } else {
        vec![("cpu", d.clone())]
    };
    let mut last = None;
    for (label, config) in configs {
        // The last runtime goes first: one runtime per CUDA device (`DeviceInUse`).
        drop(last.take());
        let rt = Runtime::with_config(config).unwrap();
        eprintln!("{} ({label})", rt.backend());
        let mut g = c.benchmark_group("round_trip_1_task");
        let mut i = 0;
        g.bench_function(format!("persistent_{}", label.replace([' ', ',', '<', '=', '/'], "_")), |b| {
            b.iter(|| {
                i += 1;
                round_trip(&rt, i)
            })
        });
        g.finish();
        rows.push((format!("persistent ({label}): submit + wait"), percentiles(&mut round_trips(&rt), &PS)));
        // The same, awaiting the ticket's future instead of the blocking wait.
        let mut s = samples(|| futures::executor::block_on(rt.submit(&[Task::noop(1)]).unwrap().wait_async()).unwrap(), WARMUP, SAMPLES);
        rows.push((format!("persistent ({label}): submit + await"), percentiles(&mut s, &PS)));
        // The same on tokio's current-thread runtime (a parking executor of its own).
        let tokio = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let mut s = samples(|| tokio.block_on(rt.submit(&[Task::noop(1)]).unwrap().wait_async()).unwrap(), WARMUP, SAMPLES);
        rows.push((format!("persistent ({label}): submit + await (tokio)"), percentiles(&mut s, &PS)));
        if label == "relay" || label == "cpu" {
            // Elastic residency: the first task after an idle exit pays the
            // relaunch. The exit itself (`release`) is not timed; the submit + wait
            // after it is. Fewer samples: each exit waits for the kernels to leave.
            let n = 2_000;
            let (mut first, mut exit, mut returned) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
            for i in 0..n + 200 {
                let s = std::time::Instant::now();
                while !rt.sharing().release().unwrap() {
                    std::hint::spin_loop();
                }
                let e = s.elapsed();
                let s = std::time::Instant::now();
                // The submit call relaunches both kernels before it publishes.
                let t = rt.submit(&[Task::noop(i as u64)]).unwrap();
                let r = s.elapsed();
                t.wait().unwrap();
                if i >= 200 {
                    first.push(s.elapsed());
                    exit.push(e);
                    returned.push(r);
                }
            }
            rows.push((format!("persistent ({label}): first task after an exit"), percentiles(&mut first, &PS)));
            rows.push((format!("  ({label}) the exit (release)"), percentiles(&mut exit, &PS)));
            rows.push((format!("  ({label}) submit call returns, after an exit"), percentiles(&mut returned, &PS)));
        }
        if rt.probe().relayed().is_some() {
            // Where the time goes: the submit call, the completion, and the relay's
            // echo (it echoes when a poll finds nothing new: one poll after it
            // published, so this is an upper bound of its publication).
            let (mut sub, mut rel, mut done) = (vec![], vec![], vec![]);
            for i in 0..WARMUP + SAMPLES {
                let s = std::time::Instant::now();
                let t = rt.submit(&[Task::noop(i as u64)]).unwrap();
                let a = s.elapsed();
                let end = t.first_seq() + 1;
                while rt.probe().relayed().unwrap() < end {
                    std::hint::spin_loop();
                }
                let b = s.elapsed();
                t.wait().unwrap();
                let c = s.elapsed();
                if i >= WARMUP {
                    sub.push(a);
                    rel.push(b);
                    done.push(c);
                }
            }
            rows.push((format!("  ({label}) submit call returns"), percentiles(&mut sub, &PS)));
            rows.push((format!("  ({label}) relay echo seen"), percentiles(&mut rel, &PS)));
            rows.push((format!("  ({label}) completion seen"), percentiles(&mut done, &PS)));
        }
        rt.close().unwrap();
        last = Some(rt);
    }
    let rt = last.unwrap();
    if cuda {
        // Baselines with the persistent kernel stopped: nothing resident beside them.
        let base = Baselines::new(&rt, 1).unwrap();
        let one = base.prepare(&rt, &[Task::noop(1)]).unwrap();
        let graph = base.capture_graph(&one, false).unwrap();
        let mut g = c.benchmark_group("round_trip_1_task");
        g.bench_function("launch_sync", |b| b.iter(|| base.launch_per_task(&one, false).unwrap()));
        g.bench_function("graph_replay_sync", |b| b.iter(|| base.replay(&graph).unwrap()));
        g.finish();
        let mut s = samples(|| base.launch_per_task(&one, false).unwrap(), WARMUP, SAMPLES);
        rows.push(("launch + synchronize".into(), percentiles(&mut s, &PS)));
        let mut s = samples(|| base.replay(&graph).unwrap(), WARMUP, SAMPLES);
        rows.push(("graph replay + synchronize".into(), percentiles(&mut s, &PS)));
    }
    println!("\nround trip of one noop task, {} ({SAMPLES} samples after {WARMUP} warm-up), microseconds", rt.backend().name);
    println!("{:<40} {:>8} {:>8} {:>8} {:>8}", "", "p50", "p90", "p99", "p99.9");
    for (label, p) in &rows {
        println!("{label:<40} {:>8.2} {:>8.2} {:>8.2} {:>8.2}", p[0], p[1], p[2], p[3]);
    }
    if let Some((_, launch)) = rows.iter().find(|(l, _)| l.starts_with("launch")) {
        println!("persistent p50 / launch+sync p50 = {:.2}", rows[0].1[0] / launch[0]);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
