//! A task server: several host threads feed one resident kernel with a mix of task
//! kinds for a while, as the clients of a dispatch service would, and report tasks/s
//! and round-trip latency percentiles per kind. Every result is checked at the end:
//! - `single`: one noop at a time, submit then wait: the latency a lone request sees;
//! - `batch`: batches of 1024 tagged noops, several in flight, results read back;
//! - `axpy`: batches of axpy tasks on each client's own slices (checked in f64);
//! - `tree`: one root that grows a tree of 341 tasks on the device (spawned children),
//!   every node marked exactly once.
//!
//!     cargo run --release --example task_server [seconds] [clients]

use rand::Rng;
use resident::{Runtime, Task};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

const BATCH: usize = 1024;
const AXPY_TASKS: usize = 64;
const AXPY_SLICE: usize = 4096;
const TREE_DEPTH: u32 = 4;
const TREE_FANOUT: u32 = 4;

/// What one client did: tasks per kind, and round-trip samples per kind.
#[derive(Default)]
struct Report {
    tasks: [u64; 4],
    latency: [Vec<Duration>; 4],
}

const KINDS: [&str; 4] = ["single", "batch", "axpy", "tree"];

fn client(rt: &Runtime, id: usize, until: Instant) -> resident::Result<Report> {
    let mut rng = rand::rng();
    let mut rep = Report::default();
    // This client's axpy data and its f64 reference.
    let xs: Vec<f32> = (0..AXPY_TASKS * AXPY_SLICE).map(|_| rng.random_range(-1.0..1.0)).collect();
    let ys: Vec<f32> = (0..AXPY_TASKS * AXPY_SLICE).map(|_| rng.random_range(-1.0..1.0)).collect();
    let (x, y) = (rt.buffer_from(&xs)?, rt.buffer_from(&ys)?);
    let mut y_ref: Vec<f64> = ys.iter().map(|&v| v as f64).collect();
    let nodes = Task::tree_nodes(TREE_DEPTH, TREE_FANOUT).unwrap() as usize;
    let mut trees = 0usize;
    let marks = rt.buffer_from(&vec![0u32; nodes * 64])?;
    let mut in_flight: VecDeque<(Instant, u64, resident::Ticket)> = VecDeque::new();
    let mut tag = (id as u64) << 40;
    let mut round = 0u64;
    while Instant::now() < until {
        round += 1;
        // A lone request.
        let s = Instant::now();
        rt.submit(&[Task::noop(tag)])?.wait()?;
        rep.latency[0].push(s.elapsed());
        rep.tasks[0] += 1;
        // A batch of tagged noops, kept in flight.
        let batch: Vec<Task> = (0..BATCH as u64).map(|i| Task::noop(tag + i)).collect();
        in_flight.push_back((Instant::now(), tag, rt.batch(&batch).results().submit()?));
        tag += BATCH as u64;
        while in_flight.len() > 4 {
            let (s, first, t) = in_flight.pop_front().unwrap();
            let r = t.results()?;
            rep.latency[1].push(s.elapsed());
            assert!(r.iter().enumerate().all(|(i, &v)| v == first + i as u64), "batch results");
            rep.tasks[1] += BATCH as u64;
        }
        // Every fourth round: axpy over this client's slices, and a tree.
        if round.is_multiple_of(4) {
            let a: f32 = rng.random_range(-1.0..1.0);
            let tasks: Vec<Task> = (0..AXPY_TASKS)
                .map(|i| Task::axpy(a, x.slice(i * AXPY_SLICE..(i + 1) * AXPY_SLICE), y.slice(i * AXPY_SLICE..(i + 1) * AXPY_SLICE)))
                .collect();
            let s = Instant::now();
            rt.submit(&tasks)?.wait()?;
            rep.latency[2].push(s.elapsed());
            rep.tasks[2] += AXPY_TASKS as u64;
            y_ref.iter_mut().zip(&xs).for_each(|(y, &x)| *y += a as f64 * x as f64);
            if trees < 64 {
                let s = Instant::now();
                rt.submit(&[Task::tree(marks.slice(trees * nodes..(trees + 1) * nodes), 0, TREE_DEPTH, TREE_FANOUT)])?.wait()?;
                rep.latency[3].push(s.elapsed());
                rep.tasks[3] += nodes as u64;
                trees += 1;
            }
        }
    }
    for (s, first, t) in in_flight {
        let r = t.results()?;
        rep.latency[1].push(s.elapsed());
        assert!(r.iter().enumerate().all(|(i, &v)| v == first + i as u64), "batch results");
        rep.tasks[1] += BATCH as u64;
    }
    // Checks: axpy against the f64 reference, every tree node marked exactly once.
    let got = y.read()?;
    // Norm-wise relative error: each element carries the fp32 rounding of every round.
    let (err2, ref2) = got.iter().zip(&y_ref).fold((0.0, 0.0), |(e, r), (&g, &v)| (e + (g as f64 - v).powi(2), r + v * v));
    let rel = (err2 / ref2.max(f64::MIN_POSITIVE)).sqrt();
    assert!(rel < 1e-5, "client {id}: axpy relative error {rel:e}");
    let m = marks.read()?;
    assert!(m[..trees * nodes].iter().all(|&v| v == 1) && m[trees * nodes..].iter().all(|&v| v == 0), "client {id}: tree marks");
    Ok(rep)
}

fn pct(v: &mut [Duration], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort();
    v[((p / 100.0) * (v.len() - 1) as f64).round() as usize].as_secs_f64() * 1e6
}

/// Host threads feed one resident kernel a mix of task kinds, as a dispatch service's
/// clients would; tasks/s and latency percentiles per kind, every result checked.
#[derive(clap::Parser)]
struct Args {
    /// Seconds to run (default: 5 on a GPU, 1 on the CPU backend).
    #[arg(value_parser = positive_secs)]
    seconds: Option<f64>,
    /// Client threads.
    #[arg(default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=256))]
    clients: u16,
}

fn positive_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("`{s}`: a positive number of seconds")),
    }
}

fn main() -> resident::Result<()> {
    let args = <Args as clap::Parser>::parse();
    let rt = Runtime::new()?;
    let default_secs = if rt.backend().kind == resident::BackendKind::Cuda { 5.0 } else { 1.0 };
    let secs = args.seconds.unwrap_or(default_secs);
    let clients = args.clients as usize;
    println!("{}", rt.backend());
    println!("{clients} clients for {secs} s");
    let start = Instant::now();
    let until = start + Duration::from_secs_f64(secs);
    let reports: Vec<Report> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..clients)
            .map(|id| {
                s.spawn({
                    let rt = &rt;
                    move || client(rt, id, until)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect::<resident::Result<_>>()
    })?;
    let elapsed = start.elapsed().as_secs_f64();
    let mut total = 0;
    println!("{:<8} {:>12} {:>12} {:>12} {:>12} {:>12}", "kind", "tasks", "tasks/s", "p50 us", "p99 us", "p99.9 us");
    for (k, kind) in KINDS.iter().enumerate() {
        let tasks: u64 = reports.iter().map(|r| r.tasks[k]).sum();
        let mut lat: Vec<Duration> = reports.iter().flat_map(|r| r.latency[k].iter().copied()).collect();
        total += tasks;
        println!(
            "{:<8} {:>12} {:>12.3e} {:>12.1} {:>12.1} {:>12.1}",
            kind,
            tasks,
            tasks as f64 / elapsed,
            pct(&mut lat, 50.0),
            pct(&mut lat, 99.0),
            pct(&mut lat, 99.9)
        );
    }
    println!("all kinds: {total} tasks in {elapsed:.2} s = {:.3e} tasks/s; every result checked", total as f64 / elapsed);
    rt.shutdown()
}
