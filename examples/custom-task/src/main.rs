//! resident's custom-task example: task types of a user's own, in a device crate of
//! their own (`device/`), compiled into a kernel image by this crate's build script and
//! run by the persistent kernel on a GPU, or by the CPU backend's workers (the same
//! code, compiled for the host) when there is none:
//!
//!     cargo run --release -p custom-task
//!
//! Four jobs on fresh random inputs, each checked against a reference computed on the
//! host (exact for the histograms, f64 for the floating-point ones), outputs poisoned
//! before every run:
//! 1. a histogram of 2^22 values (2^18 on the CPU) with atomics, as one host-fed batch of
//!    tasks, each counting its chunk in scratch shared memory first;
//! 2. the same histogram as ONE task that pushes a task per chunk on the device;
//! 3. a sum of squares across tasks: each task writes a partial and signals a device
//!    counter, a last task waits for the counter and adds the partials up (one batch,
//!    no host round trip between the stages);
//! 4. a polynomial whose arguments fill the 48 bytes a task has.

use custom_task::{histogram, image, poly, runtime, sum_squares};
use custom_task_device::{Histogram, HistogramSplit, Poly, SumSquares, Total};
use rand::Rng;
use resident::{BackendKind, DeviceTask, Result, Runtime, Task};
use std::time::Instant;

/// Elements per histogram task, and per sum-of-squares task.
const CHUNK: u32 = 16 * 1024;
const BINS: usize = 256;

/// Tasks of a user's own (a histogram, a reduction across tasks joined by a device
/// counter, a polynomial) on the GPU if there is one, else on the CPU backend, every
/// result checked.
#[derive(clap::Parser)]
struct Args {}

fn main() {
    <Args as clap::Parser>::parse();
    let result = runtime(image(), BackendKind::Auto).and_then(|rt| run(&rt));
    match result {
        Ok(true) => println!("all results match"),
        Ok(false) => {
            eprintln!("MISMATCH");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

fn run(rt: &Runtime) -> Result<bool> {
    println!("{}", rt.backend());
    let image = rt.kernel_image();
    println!(
        "kernel image `{}`: task set {} ({} task types), {} B of scratch per warp",
        image.name(),
        image.task_set(),
        image.task_ids().len(),
        image.scratch_bytes_per_warp()
    );
    let n: u32 = if rt.backend().kind == BackendKind::Cuda { 1 << 22 } else { 1 << 18 };
    let mut rng = rand::rng();
    let mut ok = true;

    // 1 and 2: the histogram, host-fed and device-spawned.
    let data: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let shift = rng.random_range(0..8);
    let want = histogram(&data, BINS, shift);
    let d = rt.buffer_from(&data)?;
    let bins = rt.buffer::<u32>(BINS)?;
    let tasks: Vec<Task> = (0..n.div_ceil(CHUNK))
        .map(|k| {
            Histogram { data: d.slice(k as usize * CHUNK as usize..((k + 1) * CHUNK).min(n) as usize), bins: bins.all(), shift }.task()
        })
        .collect();
    let mut times = vec![];
    for _ in 0..5 {
        bins.write(&[0; BINS])?;
        let t = Instant::now();
        let counted = rt.batch(&tasks).results().submit()?.results()?;
        times.push(t.elapsed());
        ok &= check("histogram, host-fed batch", bins.read()? == want && counted.iter().sum::<u64>() == n as u64);
    }
    times.sort();
    println!(
        "  {} tasks of {CHUNK} values: {:.3} ms median of 5 ({:.2} G values/s)",
        tasks.len(),
        times[2].as_secs_f64() * 1e3,
        n as f64 / times[2].as_secs_f64() / 1e9
    );
    bins.write(&[0; BINS])?;
    let split = HistogramSplit { data: d.all(), bins: bins.all(), shift, chunk: CHUNK };
    let pushed = rt.batch(&[split.task()]).results().submit()?.results()?;
    ok &= check("histogram, one task pushing one per chunk on the device", bins.read()? == want && pushed == [n.div_ceil(CHUNK) as u64]);

    // 3: the sum of squares, two stages joined by a device counter.
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let xb = rt.buffer_from(&x)?;
    let parts = n.div_ceil(CHUNK);
    let partials = rt.buffer_from(&vec![f32::NAN; parts as usize])?;
    let total = rt.buffer_from(&[f32::NAN])?;
    let done = rt.counter()?;
    let mut batch: Vec<Task> = (0..parts)
        .map(|k| {
            let x = xb.slice(k as usize * CHUNK as usize..((k + 1) * CHUNK).min(n) as usize);
            SumSquares { x, partials: partials.all(), index: k }.task().signals(done.id())
        })
        .collect();
    batch.push(Total { partials: partials.all(), total: total.all() }.task().after(done.id(), parts));
    rt.submit(&batch)?.wait()?;
    let (got, want) = (total.read()?[0] as f64, sum_squares(&x));
    let rel = (got - want).abs() / want;
    println!("  sum of squares of {n} values in {parts} tasks + 1: {got:.6} against {want:.6} (f64), relative error {rel:.1e}");
    ok &= check("sum of squares across tasks, joined on the device", rel < 1e-5);

    // 4: the polynomial (48 bytes of arguments).
    let c: [f32; 6] = std::array::from_fn(|_| rng.random_range(-1.0..1.0));
    let y = rt.buffer_from(&vec![f32::NAN; n as usize])?;
    let tasks: Vec<Task> = (0..parts)
        .map(|k| {
            let r = k as usize * CHUNK as usize..((k + 1) * CHUNK).min(n) as usize;
            Poly { x: xb.slice(r.clone()), y: y.slice(r), c }.task()
        })
        .collect();
    rt.submit(&tasks)?.wait()?;
    let worst = y.read()?.iter().zip(&x).map(|(&g, &v)| (g as f64 - poly(&c, v)).abs()).fold(0.0, f64::max);
    println!("  polynomial of degree 5 at {n} points: max abs error {worst:.1e} against f64");
    ok &= check("polynomial, arguments at the 48-byte limit", worst < 1e-5);
    Ok(ok)
}

fn check(what: &str, good: bool) -> bool {
    println!("{what}: {}", if good { "ok" } else { "MISMATCH" });
    good
}
