//! A persistent RNN: `h_t = tanh(W_hh h_{t-1} + W_ih x_t + b)`, hidden size 1024, fp32,
//! in ONE launch for the whole sequence. Each block keeps its rows of the weights in
//! shared memory from the first step to the last; the blocks meet at a device-side grid
//! barrier between time steps; the inputs can arrive from the host while it runs
//! (written into mapped pinned memory, a feeder block copies them in).
//!
//! Baselines from the same device code: one launch per time step, which reads the
//! weights from global memory each step, and those launches replayed from a CUDA Graph.
//! Batch sizes 1, 2, 4, 8. Outputs are checked against an f64 recurrence (the first
//! steps) and the persistent kernel against the baseline (every step).
//!
//!     cargo run --release -p fused-ops --example persistent_rnn [steps]

use fused_ops::reference;
use fused_ops::rnn::{Feed, Rnn, RnnShape, RnnWeights};
use fused_ops::timing;
use rand::Rng;
use resident::BackendKind;

struct Size {
    hidden: u32,
    input: u32,
    steps: u32,
    /// Steps checked against the f64 recurrence (it costs O(hidden²) per step on one core).
    checked_steps: u32,
    runs: usize,
}

fn gpu_size(steps: u32) -> Size {
    Size { hidden: 1024, input: 256, steps, checked_steps: 64.min(steps), runs: 7 }
}

fn cpu_size() -> Size {
    Size { hidden: 64, input: 16, steps: 40, checked_steps: 40, runs: 3 }
}

fn weights(hidden: u32, input: u32) -> RnnWeights {
    let mut rng = rand::rng();
    let (h, i) = (hidden as usize, input as usize);
    let (a, b) = (1.0 / (h as f32).sqrt(), 1.0 / (i as f32).sqrt());
    RnnWeights {
        w_hh: (0..h * h).map(|_| rng.random_range(-a..a)).collect(),
        w_ih: (0..h * i).map(|_| rng.random_range(-b..b)).collect(),
        bias: (0..h).map(|_| rng.random_range(-0.1..0.1)).collect(),
    }
}

/// Runs every batch size on `kind`; true if every check passed.
fn run(kind: BackendKind, size: &Size) -> resident::Result<bool> {
    let mut rng = rand::rng();
    let w = weights(size.hidden, size.input);
    let mut ok = true;
    let mut table = vec![];
    for batch in [1u32, 2, 4, 8] {
        let shape = RnnShape { hidden: size.hidden, input: size.input, batch, steps: size.steps };
        let mut rnn = Rnn::new(kind, shape, &w)?;
        if batch == 1 {
            println!("{}", rnn.describe());
            println!(
                "hidden {}, input {}, {} steps; per-step times are medians of {} runs / steps",
                size.hidden, size.input, size.steps, size.runs
            );
        }
        let h0: Vec<f32> = (0..shape.h_len()).map(|_| rng.random_range(-0.5..0.5)).collect();
        let xs: Vec<f32> = (0..shape.xs_len()).map(|_| rng.random_range(-1.0..1.0)).collect();
        // Check: the f64 recurrence over the first steps, and the persistent kernel
        // against the baseline over every step.
        let c = RnnShape { steps: size.checked_steps, ..shape };
        let want = reference::rnn(
            c.hidden as usize,
            c.input as usize,
            c.batch as usize,
            c.steps as usize,
            &w.w_hh,
            &w.w_ih,
            &w.bias,
            &h0,
            &xs[..c.xs_len()],
        );
        let base = rnn.per_step(&h0, &xs)?;
        let mut runs = vec![("per-step launches".to_string(), base.out.clone())];
        for feed in [Feed::Device, Feed::HostAhead, Feed::HostLive] {
            runs.push((format!("persistent, inputs {feed:?}"), rnn.persistent(&h0, &xs, feed)?.out));
        }
        if rnn.is_cuda() {
            runs.push(("graph of per-step launches".into(), rnn.per_step_graph(&h0, &xs)?.out));
        }
        for (name, out) in &runs {
            let (rel, max) = reference::rnn_errors(&out[..c.out_len()], &want);
            let (brel, bmax) = reference::rnn_errors(out, &base.out.iter().map(|&v| v as f64).collect::<Vec<_>>());
            let good = rel < 1e-5 && max < 1e-4 && brel < 1e-6 && bmax < 1e-5;
            ok &= good;
            if !good || batch == 1 {
                println!(
                    "  batch {batch}, {name}: vs f64 (first {} steps) relative {rel:.2e}, max {max:.2e}; vs per-step launches (all steps) max {bmax:.2e}: {}",
                    c.steps,
                    if good { "ok" } else { "MISMATCH" }
                );
            }
        }
        let steps = size.steps as f64;
        let per_step = |d: std::time::Duration| timing::us(d) / steps;
        let t_dev = timing::median_of(1, size.runs, || rnn.persistent(&h0, &xs, Feed::Device).map(|r| r.elapsed))?;
        let t_live = timing::median_of(1, size.runs, || rnn.persistent(&h0, &xs, Feed::HostLive).map(|r| r.elapsed))?;
        let t_launch = timing::median_of(1, size.runs, || rnn.per_step(&h0, &xs).map(|r| r.elapsed))?;
        let t_graph =
            if rnn.is_cuda() { Some(timing::median_of(1, size.runs, || rnn.per_step_graph(&h0, &xs).map(|r| r.elapsed))?) } else { None };
        table.push((batch, per_step(t_dev), per_step(t_live), per_step(t_launch), t_graph.map(per_step)));
    }
    println!("µs per time step (median), and the persistent kernel's speedup (inputs in device memory):");
    println!("  batch  persistent  persistent,live-fed  per-step launches  graph replay  x launches  x graph");
    for (b, dev, live, launch, graph) in table {
        let g = graph.map_or("       n/a".to_string(), |g| format!("{g:>10.2}"));
        let xg = graph.map_or("   n/a".to_string(), |g| format!("{:>6.2}", g / dev));
        println!("  {b:>5}  {dev:>10.2}  {live:>19.2}  {launch:>17.2}  {g}  {:>10.2}  {xg}", launch / dev);
    }
    if kind == BackendKind::Cpu || !resident::cuda_available() {
        println!("(CPU backend: the same device functions on threads; the CUDA Graph baseline is GPU-only and skipped)");
    }
    Ok(ok)
}

/// The persistent RNN against one launch per step, a graph replay and cuDNN's shapes.
#[derive(clap::Parser)]
struct Args {
    /// Time steps per run (on a GPU; the CPU variant is small and fixed).
    #[arg(default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    steps: u32,
}

fn main() {
    let steps = <Args as clap::Parser>::parse().steps;
    let (kind, size) = if resident::cuda_available() { (BackendKind::Cuda, gpu_size(steps)) } else { (BackendKind::Cpu, cpu_size()) };
    timing::exit_with(run(kind, &size));
}

#[cfg(test)]
mod tests {
    /// The example's CPU variant, in CI.
    #[test]
    fn cpu_small() {
        assert!(super::run(resident::BackendKind::Cpu, &super::cpu_size()).unwrap());
    }
}
