//! Fused conv + batch norm inside the persistent kernel: a 3×3 convolution (fp32, NCHW)
//! followed by training-mode batch normalization (per-channel mean and variance over the
//! batch, normalize, scale, shift) and ReLU.
//!
//! Fused: every conv tile is a queue task that also stores its per-channel moments and
//! signals a device counter; the normalize tasks wait on that counter and are released
//! on the device once every tile is done: one submission, no launch between the stages.
//! Baselines (CUDA only), from the same device functions: the three stages (conv,
//! statistics, normalize) as three launches, and those three launches replayed from a
//! CUDA Graph. Every result is checked against an f64 reference on random inputs.
//!
//!     cargo run --release -p fused-ops --example fused_conv_bn [runs]
//!     cargo run --release -p fused-ops --example fused_conv_bn sweep [runs]
//!
//! `sweep` runs the same comparison over shapes from tiny to this size (CUDA only), a
//! fresh runtime each, and ends with a table: where fusion pays (stage overheads
//! comparable with the conv) and where it cannot (a conv-bound problem).
//!
//! On a GPU: batch 32, 64 → 64 channels, 56×56 (the reference checks every output of
//! four random channels and 4096 random conv outputs); on the CPU backend, a small
//! shape, checked in full. With `RESIDENT_DUMP=dir`, writes the inputs, outputs and
//! timings there for `examples/torch_conv_bn.py` (PyTorch/cuDNN comparison).

use fused_ops::conv_bn::{ConvBn, ConvBnCost, ConvBnInputs};
use fused_ops::conv_bn_stages::ConvBnStages;
use fused_ops::timing;
use fused_ops::{ConvGeom, reference};
use rand::Rng;
use resident::{BackendKind, Runtime, RuntimeConfig};
use std::time::Duration;

/// A problem size and how thoroughly to check it.
struct Size {
    geom: ConvGeom,
    /// Channels whose every output is checked (all when >= c_out).
    full_channels: usize,
    /// Random conv outputs checked.
    samples: usize,
    runs: usize,
}

const EPS: f32 = 1e-5;

fn gpu_size(runs: usize) -> Size {
    Size { geom: ConvGeom::checked(32, 64, 64, 56, 56).unwrap(), full_channels: 4, samples: 4096, runs }
}

fn cpu_size(runs: usize) -> Size {
    Size { geom: ConvGeom::checked(2, 8, 16, 12, 12).unwrap(), full_channels: 16, samples: 500, runs }
}

fn random_inputs(g: ConvGeom) -> ConvBnInputs {
    let mut rng = rand::rng();
    let scale = 1.0 / ((g.c_in * 9) as f32).sqrt();
    ConvBnInputs {
        geom: g,
        x: (0..g.x_len()).map(|_| rng.random_range(-1.0..1.0)).collect(),
        w: (0..g.w_len()).map(|_| rng.random_range(-scale..scale)).collect(),
        gamma: (0..g.c_out).map(|_| rng.random_range(0.5..1.5)).collect(),
        beta: (0..g.c_out).map(|_| rng.random_range(-0.5..0.5)).collect(),
    }
}

/// Checks the last pass's outputs against the f64 reference; prints and returns whether
/// they are within fp32 tolerance.
fn check(name: &str, inp: &ConvBnInputs, cb: &ConvBn, size: &Size) -> resident::Result<bool> {
    let g = inp.geom;
    let mut rng = rand::rng();
    let mut channels: Vec<usize> = (0..g.c_out as usize).collect();
    while channels.len() > size.full_channels {
        channels.swap_remove(rng.random_range(0..channels.len()));
    }
    let samples: Vec<_> = (0..size.samples)
        .map(|_| (rng.random_range(0..g.n as usize), rng.random_range(0..g.c_out as usize), rng.random_range(0..g.hw() as usize)))
        .collect();
    let (mean, var) = cb.batch_stats()?;
    let r = reference::check_conv_bn(inp, EPS, &cb.y.read()?, &cb.out.read()?, &mean, &var, &channels, &samples);
    println!(
        "{name}: vs f64 reference, output relative error {:.2e} (max abs {:.2e}) over {} outputs of {} channels; conv {:.2e} (relative to sum |x w|) at {} samples; batch stats {:.2e}; {}",
        r.out_rel,
        r.out_max,
        r.out_checked,
        channels.len(),
        r.y_max_rel,
        r.y_checked,
        r.stats_max_rel,
        if r.ok() { "ok" } else { "MISMATCH" }
    );
    Ok(r.ok())
}

/// Writes inputs, outputs and timings for examples/torch_conv_bn.py.
fn dump(dir: &str, inp: &ConvBnInputs, out: &[f32], mean: &[f32], var: &[f32], times: &[(&str, Duration)]) -> std::io::Result<()> {
    let dir = std::path::Path::new(dir);
    std::fs::create_dir_all(dir)?;
    let write = |name: &str, v: &[f32]| std::fs::write(dir.join(name), bytemuck::cast_slice::<f32, u8>(v));
    write("x.f32", &inp.x)?;
    write("w.f32", &inp.w)?;
    write("gamma.f32", &inp.gamma)?;
    write("beta.f32", &inp.beta)?;
    write("out.f32", out)?;
    write("mean.f32", mean)?;
    write("var.f32", var)?;
    let g = inp.geom;
    let timings: Vec<String> = times.iter().map(|(k, d)| format!("\"{k}_ms\": {}", d.as_secs_f64() * 1e3)).collect();
    std::fs::write(
        dir.join("meta.json"),
        format!(
            "{{\"n\": {}, \"c_in\": {}, \"c_out\": {}, \"h\": {}, \"w\": {}, \"eps\": {EPS}, {}}}\n",
            g.n,
            g.c_in,
            g.c_out,
            g.h,
            g.w,
            timings.join(", ")
        ),
    )
}

/// Medians of one shape: fused, and (CUDA) three launches and their graph replay.
type Times = Vec<(&'static str, Duration)>;

/// Runs the example on `rt` (a runtime that loads the example's image); whether every check passed, and
/// the medians.
fn run(rt: &Runtime, size: &Size) -> resident::Result<(bool, Times)> {
    let g = size.geom;
    println!("{}", rt.backend());
    let cost = ConvBnCost::of(&g);
    println!(
        "conv 3x3 + batch norm + ReLU, fp32: batch {}, {} -> {} channels, {}x{}; {} conv tiles + {} normalize tasks; {:.2} GFLOP, {:.1} MB fused / {:.1} MB unfused",
        g.n,
        g.c_in,
        g.c_out,
        g.h,
        g.w,
        g.tiles(),
        g.c_out * g.n.div_ceil(fused_ops::conv_bn::NORM_CHUNK),
        cost.flops / 1e9,
        cost.fused_bytes / 1e6,
        cost.unfused_bytes / 1e6
    );
    let inp = random_inputs(g);
    let cb = ConvBn::new(rt, &inp, EPS)?;
    let done = rt.counter()?;
    let mut signaled = 0u32;
    let mut pass = || {
        let r = cb.run_fused(rt, &done, signaled);
        signaled = signaled.wrapping_add(g.tiles());
        r
    };
    let fused = timing::median(2, size.runs, &mut pass)?;
    cb.poison()?;
    pass()?;
    let mut ok = check("fused (persistent kernel)", &inp, &cb, size)?;
    let dump_dir = std::env::var("RESIDENT_DUMP").ok();
    let fused_out = match dump_dir {
        Some(_) => Some((cb.out.read()?, cb.batch_stats()?)),
        None => None,
    };
    let mut times: Times = vec![("fused", fused)];
    let line = |name: &str, d: Duration, bytes: f64| {
        let vs = if d == fused { String::new() } else { format!("  fused is {:.2}x faster", d.as_secs_f64() / fused.as_secs_f64()) };
        println!(
            "  {name:<34} {:>9.3} ms  {:>6.2} TFLOP/s  {:>7.1} GB/s{vs}",
            timing::ms(d),
            cost.flops / d.as_secs_f64() / 1e12,
            bytes / d.as_secs_f64() / 1e9,
        )
    };
    let is_cuda = rt.backend().kind == BackendKind::Cuda;
    // The baselines run with the persistent kernel stopped (buffers stay), so that
    // nothing resident shares the SMs with them.
    rt.close()?;
    let mut stage_times = None;
    if is_cuda {
        let stages = ConvBnStages::new(rt, &cb)?;
        let launches = timing::median(2, size.runs, || stages.run())?;
        cb.poison()?;
        stages.run()?;
        ok &= check("three launches", &inp, &cb, size)?;
        let graph = stages.capture()?;
        let replay = timing::median(2, size.runs, || graph.replay())?;
        cb.poison()?;
        graph.replay()?;
        ok &= check("graph replay", &inp, &cb, size)?;
        times.push(("launches", launches));
        times.push(("graph", replay));
        stage_times = Some((launches, replay));
    }
    println!("median of {} runs (after 2 warm-up runs), wall clock, synchronized:", size.runs);
    line("fused: one submission, device deps", fused, cost.fused_bytes);
    match stage_times {
        Some((launches, replay)) => {
            line("unfused: three launches", launches, cost.unfused_bytes);
            line("unfused: CUDA Graph of the three", replay, cost.unfused_bytes);
        }
        None => println!("  (CPU backend: the GPU-only baselines, three launches and their CUDA Graph, are skipped)"),
    }
    if let (Some(dir), Some((out, (mean, var)))) = (dump_dir, fused_out) {
        match dump(&dir, &inp, &out, &mean, &var, &times) {
            Ok(()) => println!("inputs, the fused pass's outputs and the timings written to {dir} for examples/torch_conv_bn.py"),
            Err(e) => eprintln!("could not write {dir}: {e}"),
        }
    }
    Ok((ok, times))
}

/// The conv + BN image (the conv tile and normalize alone) with three blocks per SM;
/// `RESIDENT_CONV_BN_IMAGE=fused_ops` runs the fused pass on the image of every example
/// task instead (its kernel spills several times more),
/// and `RESIDENT_BLOCKS_PER_SM=n` asks for `n` blocks per SM.
fn config(backend: BackendKind) -> RuntimeConfig {
    let config = match std::env::var("RESIDENT_CONV_BN_IMAGE").as_deref() {
        Ok("fused_ops") => RuntimeConfig { max_blocks_per_sm: 3, ..fused_ops::config(backend) },
        _ => fused_ops::conv_bn_config(backend),
    };
    match std::env::var("RESIDENT_BLOCKS_PER_SM").ok().and_then(|v| v.parse().ok()) {
        Some(blocks) => RuntimeConfig { max_blocks_per_sm: blocks, ..config },
        None => config,
    }
}

/// Shapes of the sweep, from a few tiles to the example's size: (n, c_in, c_out, h, w).
const SWEEP: [(u32, u32, u32, u32, u32); 6] =
    [(1, 8, 8, 16, 16), (1, 16, 16, 32, 32), (1, 64, 64, 14, 14), (4, 64, 64, 28, 28), (8, 64, 64, 56, 56), (32, 64, 64, 56, 56)];

/// The comparison over [`SWEEP`], one runtime per shape (each run closes its runtime
/// for the baselines), then a table of the medians.
fn sweep(runs: usize) -> resident::Result<bool> {
    let mut rows = vec![];
    let mut ok = true;
    for (n, c_in, c_out, h, w) in SWEEP {
        let rt = Runtime::with_config(config(BackendKind::Cuda))?;
        let size = Size { geom: ConvGeom::checked(n, c_in, c_out, h, w).expect("a valid shape"), full_channels: 4, samples: 1024, runs };
        let (good, times) = run(&rt, &size)?;
        ok &= good;
        rows.push((size.geom, times));
    }
    println!("\nsweep: medians of {runs} runs (ms); ratios = unfused time / fused time (> 1: fused is faster)");
    println!(
        "{:>22} {:>8} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "shape n,ci,co,h,w", "tiles", "GFLOP", "fused", "launches", "graph", "x launch", "x graph"
    );
    for (g, t) in rows {
        let get = |k: &str| t.iter().find(|r| r.0 == k).map(|r| r.1.as_secs_f64() * 1e3).unwrap_or(f64::NAN);
        let (f, l, gr) = (get("fused"), get("launches"), get("graph"));
        let shape = format!("{},{},{},{},{}", g.n, g.c_in, g.c_out, g.h, g.w);
        println!(
            "{shape:>22} {:>8} {:>9.3} {f:>10.4} {l:>10.4} {gr:>10.4} {:>9.2} {:>9.2}",
            g.tiles(),
            ConvBnCost::of(&g).flops / 1e9,
            l / f,
            gr / f
        );
    }
    Ok(ok)
}

/// Conv 3x3 + batch norm + ReLU fused in the persistent kernel, against the same stages
/// as three launches (and a CUDA Graph of them).
#[derive(clap::Parser)]
#[command(args_conflicts_with_subcommands = true)]
struct Args {
    /// Timed runs, after 2 warm-up runs (the median is printed).
    #[arg(default_value_t = 11, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: u32,
    #[command(subcommand)]
    sweep: Option<Sweep>,
}

#[derive(clap::Subcommand)]
enum Sweep {
    /// The shape sweep, small to large.
    Sweep {
        /// Timed runs per shape.
        #[arg(default_value_t = 11, value_parser = clap::value_parser!(u32).range(1..=1000))]
        runs: u32,
    },
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    if let Some(Sweep::Sweep { runs }) = args.sweep {
        return timing::exit_with(sweep(runs as usize));
    }
    let runs = args.runs as usize;
    let result = Runtime::with_config(config(BackendKind::Auto)).and_then(|rt| {
        let size = if rt.backend().kind == BackendKind::Cuda { gpu_size(runs) } else { cpu_size(runs) };
        run(&rt, &size).map(|(ok, _)| ok)
    });
    timing::exit_with(result);
}

#[cfg(test)]
mod tests {
    /// The example's CPU variant, in CI (`cargo test` runs example tests: `test = true`).
    #[test]
    fn cpu_small() {
        let rt = resident::Runtime::with_config(resident::RuntimeConfig {
            cpu_workers: 4,
            ..fused_ops::conv_bn_config(resident::BackendKind::Cpu)
        })
        .unwrap();
        assert!(super::run(&rt, &super::cpu_size(3)).unwrap().0);
    }
}
