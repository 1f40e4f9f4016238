//! Quickstart: start the runtime (GPU if there is one, else CPU), submit a few thousand
//! tasks of three kinds, and check every result against a reference computed on the
//! CPU in f64 from fresh random inputs.
//!
//!     cargo run --release --example quickstart

use rand::Rng;
use resident::{Runtime, Task};
use std::time::Instant;

const SLICES: usize = 2048;
const SLICE: usize = 1024;

/// resident's quickstart: 6,144 tasks of three kinds on the GPU if there is one (else
/// the CPU backend), every result checked against a reference.
#[derive(clap::Parser)]
struct Args {}

fn main() -> resident::Result<()> {
    <Args as clap::Parser>::parse();
    let rt = Runtime::new()?;
    println!("{}", rt.backend());

    let mut rng = rand::rng();
    let alpha: f32 = rng.random_range(-2.0..2.0);
    let xs: Vec<f32> = (0..SLICES * SLICE).map(|_| rng.random_range(-1.0..1.0)).collect();
    let ys: Vec<f32> = (0..SLICES * SLICE).map(|_| rng.random_range(-1.0..1.0)).collect();
    let x = rt.buffer_from(&xs)?;
    let y = rt.buffer_from(&ys)?;
    let marks = rt.buffer_from(&vec![0u32; SLICES])?;

    // One axpy per slice, a mark per slice (exactly-once witness), a tagged noop each.
    let mut tasks = Vec::with_capacity(3 * SLICES);
    for i in 0..SLICES {
        let r = i * SLICE..(i + 1) * SLICE;
        tasks.push(Task::axpy(alpha, x.slice(r.clone()), y.slice(r)));
        tasks.push(Task::mark(marks.all(), i as u32));
        tasks.push(Task::noop(0x00C0_FFEE_0000 + i as u64));
    }

    let start = Instant::now();
    let ticket = rt.batch(&tasks).results().submit()?;
    let results = ticket.results()?;
    let elapsed = start.elapsed();

    // Reference in f64.
    let out = y.read()?;
    let (mut err2, mut ref2) = (0f64, 0f64);
    for i in 0..xs.len() {
        let r = alpha as f64 * xs[i] as f64 + ys[i] as f64;
        err2 += (out[i] as f64 - r).powi(2);
        ref2 += r * r;
    }
    let rel = (err2 / ref2).sqrt();
    let marks_ok = marks.read()?.iter().all(|&m| m == 1);
    let tags_ok = (0..SLICES).all(|i| results[3 * i + 2] == 0x00C0_FFEE_0000 + i as u64 && results[3 * i] == SLICE as u64);
    println!(
        "{} tasks in {:.2} ms ({:.1} M tasks/s, submit to last completion)",
        tasks.len(),
        elapsed.as_secs_f64() * 1e3,
        tasks.len() as f64 / elapsed.as_secs_f64() / 1e6
    );
    println!("axpy relative error vs f64 reference: {rel:.2e}; every mark exactly once: {marks_ok}; noop tags echoed: {tags_ok}");
    let ok = rel < 1e-6 && marks_ok && tags_ok;
    rt.shutdown()?;
    if !ok {
        eprintln!("MISMATCH");
        std::process::exit(1);
    }
    println!("all results match");
    Ok(())
}
