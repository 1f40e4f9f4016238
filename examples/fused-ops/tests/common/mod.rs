//! Scenarios of the fused-op examples' tasks and kernels, run on both backends:
//! `tests/fused_ops_cpu.rs` (CI) and `tests/fused_ops_gpu.rs` (on a GPU, `--include-ignored`). Fresh
//! random inputs each run, outputs poisoned with NaN first, results checked against the
//! f64 references of `fused_ops::reference`.
#![allow(dead_code)]

use fused_ops::conv_bn::{ConvBn, ConvBnInputs};
use fused_ops::conv_bn_stages::ConvBnStages;
use fused_ops::records::{RecordPipeline, encode};
use fused_ops::rnn::{Feed, Rnn, RnnShape, RnnWeights};
use fused_ops::{ConvGeom, reference};
use fused_ops_device::layout::{BnNormalize, ConvTile, PackedGeom};
use rand::Rng;
use resident::BufferHandle;
use resident::{BackendKind, Error, Rejection, Runtime, Task};
use resident_device::DeviceTask;

/// Random conv + BN inputs: x in [-1, 1], weights scaled by 1/sqrt(fan-in) (as
/// PyTorch's default init), gamma in [0.5, 1.5], beta in [-0.5, 0.5].
pub fn random_conv_bn(g: ConvGeom) -> ConvBnInputs {
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

/// Channels checked in full (`full` of them, at random, or all) and `samples` random
/// conv outputs.
pub fn pick(g: ConvGeom, full: usize, samples: usize) -> (Vec<usize>, Vec<(usize, usize, usize)>) {
    let mut rng = rand::rng();
    let mut channels: Vec<usize> = (0..g.c_out as usize).collect();
    while channels.len() > full {
        channels.swap_remove(rng.random_range(0..channels.len()));
    }
    let s = (0..samples)
        .map(|_| (rng.random_range(0..g.n as usize), rng.random_range(0..g.c_out as usize), rng.random_range(0..g.hw() as usize)))
        .collect();
    (channels, s)
}

/// The fused pass (conv tiles signal a counter; normalize tasks wait on it) matches the
/// f64 reference, twice on the same counter (the second pass waits for twice the tiles).
pub fn conv_bn_fused_matches_reference(rt: &Runtime, g: ConvGeom, full_channels: usize, samples: usize) {
    let inp = random_conv_bn(g);
    let eps = 1e-5;
    let cb = ConvBn::new(rt, &inp, eps).unwrap();
    let done = rt.counter().unwrap();
    for pass in 0..2u32 {
        cb.poison().unwrap();
        cb.run_fused(rt, &done, pass * g.tiles()).unwrap();
        assert_eq!(done.value().unwrap(), (pass + 1) * g.tiles(), "every conv tile signaled once");
        let (mean, var) = cb.batch_stats().unwrap();
        let (channels, s) = pick(g, full_channels, samples);
        let r = reference::check_conv_bn(&inp, eps, &cb.y.read().unwrap(), &cb.out.read().unwrap(), &mean, &var, &channels, &s);
        eprintln!("conv+BN {g:?} pass {pass}: {r:?}");
        assert!(r.ok(), "conv + BN does not match the f64 reference: {r:?}");
    }
}

/// Conv tile `tile` of `g`, as a task.
pub fn conv_tile(g: ConvGeom, x: BufferHandle, w: BufferHandle, y: BufferHandle, partials: BufferHandle, tile: u32) -> Task {
    ConvTile { x, w, y, partials, geom: PackedGeom::of(&g), tile }.task()
}

/// The unfused baselines compute the same thing as the fused pass (the benchmark
/// compares like with like): three launches, then the graph replayed twice, each
/// checked against the f64 reference at `samples` points of 4 channels.
pub fn conv_bn_stages_match_reference(rt: &Runtime, g: ConvGeom, samples: usize) {
    let inp = random_conv_bn(g);
    let cb = ConvBn::new(rt, &inp, 1e-5).unwrap();
    rt.close().unwrap();
    let stages = ConvBnStages::new(rt, &cb).unwrap();
    let graph = stages.capture().unwrap();
    for run in 0..3 {
        cb.poison().unwrap();
        if run == 0 {
            stages.run().unwrap()
        } else {
            graph.replay().unwrap()
        }
        let (mean, var) = cb.batch_stats().unwrap();
        let (channels, s) = pick(g, 4, samples);
        let r = reference::check_conv_bn(&inp, 1e-5, &cb.y.read().unwrap(), &cb.out.read().unwrap(), &mean, &var, &channels, &s);
        eprintln!("stages run {run}: {r:?}");
        assert!(r.ok(), "{r:?}");
    }
}

/// Bad example tasks are refused on the host, typed.
pub fn nn_tasks_validated(rt: &Runtime) {
    conv_bn_tasks_validated(rt);
    let pipe = RecordPipeline::new(rt, 16, 4).unwrap();
    let mut t = pipe.parse_tasks(0, 16, 16);
    t[0].args[5] = 17; // past the buffers
    assert!(matches!(rt.submit(&t), Err(Error::InvalidTask { reason: Rejection::OutOfRange { .. }, .. })));
}

/// On a runtime of the `conv_bn` image: bad conv and normalize tasks are refused
/// typed, and so is every task outside its set (record stages, the built-in noop), while
/// good conv tiles run.
pub fn conv_bn_image_validated(rt: &Runtime) {
    conv_bn_tasks_validated(rt);
    let pipe = RecordPipeline::new(rt, 16, 4).unwrap();
    let t = pipe.parse_tasks(0, 16, 16);
    assert!(matches!(rt.submit(&t), Err(Error::InvalidTask { index: 0, reason: Rejection::UnknownTask(_) })));
    assert!(matches!(rt.submit(&[Task::noop(1)]), Err(Error::InvalidTask { index: 0, reason: Rejection::UnknownTask(_) })));
}

/// Bad conv tiles and normalize tasks are refused on the host, typed.
fn conv_bn_tasks_validated(rt: &Runtime) {
    let g = ConvGeom::checked(1, 2, 8, 4, 4).unwrap();
    let inp = random_conv_bn(g);
    let cb = ConvBn::new(rt, &inp, 1e-5).unwrap();
    let (x, w, y, p) = (cb.x.handle(), cb.w.handle(), cb.y.handle(), cb.partials.handle());
    let bad_tile = conv_tile(g, x, w, y, p, g.tiles());
    assert!(matches!(rt.submit(&[bad_tile]), Err(Error::InvalidTask { index: 0, reason: Rejection::IndexOutOfRange { .. } })));
    // x is too short for a larger problem.
    let big = ConvGeom::checked(2, 2, 8, 4, 4).unwrap();
    assert!(matches!(
        rt.submit(&[conv_tile(big, x, w, y, p, 0)]),
        Err(Error::InvalidTask { reason: Rejection::OutOfRange { arg: 0, .. }, .. })
    ));
    // A u32 buffer where an f32 one belongs.
    let u = rt.buffer::<u32>(1024).unwrap();
    assert!(matches!(
        rt.submit(&[conv_tile(g, u.handle(), w, y, p, 0)]),
        Err(Error::InvalidTask { reason: Rejection::BadBuffer { arg: 0, .. }, .. })
    ));
    let mut odd = conv_tile(g, x, w, y, p, 0);
    odd.args[5] = 2 | 7 << 16; // c_out 7: not a multiple of 8
    assert!(matches!(rt.submit(&[odd]), Err(Error::InvalidTask { reason: Rejection::BadArgs(_), .. })));
    let norm = BnNormalize {
        y,
        out: cb.out.handle(),
        partials: p,
        affine: cb.affine.handle(),
        geom: PackedGeom::of(&g),
        c: g.c_out,
        n0: 0,
        count: 1,
        eps: 1e-5,
    }
    .task();
    assert!(matches!(rt.submit(&[norm]), Err(Error::InvalidTask { reason: Rejection::BadArgs(_), .. })));
}

/// A runtime of the built-in image refuses the example's tasks, typed (its set does not hold them).
pub fn standard_refuses_nn_tasks(standard: &Runtime) {
    let g = ConvGeom::checked(1, 2, 8, 4, 4).unwrap();
    let sx = standard.buffer::<f32>(g.y_len() as usize).unwrap();
    let h = sx.handle();
    assert!(matches!(
        standard.submit(&[conv_tile(g, h, h, h, h, 0)]),
        Err(Error::InvalidTask { index: 0, reason: Rejection::UnknownTask(_) })
    ));
    let ok = standard.submit(&[Task::noop(1)]).unwrap();
    ok.wait().unwrap();
}

/// Text records with about 3% malformed ones and keys out of range now and then.
pub fn random_lines(n: usize, keys: u32) -> Vec<String> {
    let mut rng = rand::rng();
    (0..n)
        .map(|_| match rng.random_range(0..100) {
            0 => "garbage\n".to_string(),
            1 => format!("{},{}", rng.random_range(0..keys), rng.random_range(-1000..1000)), // no newline
            2 => format!("{},{}\n", keys + rng.random_range(0..10), 5),
            _ => format!("{},{}\n", rng.random_range(0..keys), rng.random_range(-999_999_999..=999_999_999)),
        })
        .collect()
}

/// The record pipeline over `n` records in batches: every stage's counts, and the
/// per-key table, exactly as the host computes them.
pub fn pipeline_counts_exact(rt: &Runtime, n: usize, batch: usize, per_task: u32, keys: u32) {
    let lines = random_lines(n, keys);
    let raw: Vec<_> = lines.iter().map(|l| encode(l).unwrap()).collect();
    let p = RecordPipeline::new(rt, n as u32, keys).unwrap();
    let mut tickets = vec![];
    let mut tasks = 0;
    for first in (0..n).step_by(batch) {
        let count = batch.min(n - first);
        p.write(first as u32, &raw[first..first + count]).unwrap();
        let t = p.parse_tasks(first as u32, count as u32, per_task);
        tasks += t.len() as u32;
        tickets.push(rt.submit(&t).unwrap());
    }
    for t in tickets {
        t.wait().unwrap();
    }
    let (want, table) = reference::records(&lines, keys);
    let got = p.counts().unwrap();
    assert_eq!((got.parse_tasks, got.transform_tasks, got.reduce_tasks), (tasks, tasks, tasks), "every stage ran once per task");
    assert_eq!(
        (got.parsed, got.rejected, got.kept, got.dropped, got.reduced),
        (want.parsed, want.rejected, want.kept, want.dropped, want.reduced)
    );
    assert_eq!(p.table().unwrap(), table, "per-key counts and sums");
}

/// Random RNN weights (spectral radius about 0.6: a contracting recurrence) and inputs.
pub fn random_rnn(s: RnnShape) -> (RnnWeights, Vec<f32>, Vec<f32>) {
    let mut rng = rand::rng();
    let (h, i) = (s.hidden as usize, s.input as usize);
    let (a, b) = (1.0 / (h as f32).sqrt(), 1.0 / (i as f32).sqrt());
    let w = RnnWeights {
        w_hh: (0..h * h).map(|_| rng.random_range(-a..a)).collect(),
        w_ih: (0..h * i).map(|_| rng.random_range(-b..b)).collect(),
        bias: (0..h).map(|_| rng.random_range(-0.1..0.1)).collect(),
    };
    let h0 = (0..s.h_len()).map(|_| rng.random_range(-0.5..0.5)).collect();
    let xs = (0..s.xs_len()).map(|_| rng.random_range(-1.0..1.0)).collect();
    (w, h0, xs)
}

/// The persistent RNN (every feed), the per-step baseline and (CUDA) its graph replay
/// match the f64 recurrence.
pub fn rnn_matches_reference(kind: BackendKind, s: RnnShape) {
    let (w, h0, xs) = random_rnn(s);
    let want = reference::rnn(s.hidden as usize, s.input as usize, s.batch as usize, s.steps as usize, &w.w_hh, &w.w_ih, &w.bias, &h0, &xs);
    let mut rnn = Rnn::new(kind, s, &w).unwrap();
    // Under compute-sanitizer (RESIDENT_TIME_SCALE), a 200-step run takes seconds.
    rnn.set_time_scale(std::env::var("RESIDENT_TIME_SCALE").ok().and_then(|v| v.parse().ok()).unwrap_or(1));
    eprintln!("{}", rnn.describe());
    let mut runs = vec![];
    for feed in [Feed::Device, Feed::HostAhead, Feed::HostLive] {
        runs.push((format!("persistent {feed:?}"), rnn.persistent(&h0, &xs, feed).unwrap()));
    }
    runs.push(("per step".into(), rnn.per_step(&h0, &xs).unwrap()));
    if rnn.is_cuda() {
        runs.push(("graph".into(), rnn.per_step_graph(&h0, &xs).unwrap()));
        runs.push(("graph again".into(), rnn.per_step_graph(&h0, &xs).unwrap()));
    }
    for (name, run) in runs {
        let (rel, max) = reference::rnn_errors(&run.out, &want);
        eprintln!("RNN {s:?} {name}: relative error {rel:.2e}, max {max:.2e}, {:?}", run.elapsed);
        assert!(rel < 1e-5 && max < 1e-4, "{name}: relative {rel}, max {max}");
    }
}

/// Bad RNN shapes and inputs are refused, typed.
pub fn rnn_rejects_bad_input(kind: BackendKind) {
    let s = RnnShape { hidden: 16, input: 8, batch: 2, steps: 3 };
    let (w, h0, xs) = random_rnn(s);
    assert!(matches!(Rnn::new(kind, RnnShape { batch: 9, ..s }, &w), Err(Error::Config(_))));
    assert!(matches!(Rnn::new(kind, RnnShape { hidden: 18, ..s }, &w), Err(Error::Config(_))));
    let mut rnn = Rnn::new(kind, s, &w).unwrap();
    assert!(matches!(rnn.persistent(&h0[1..], &xs, Feed::Device), Err(Error::LengthMismatch { .. })));
    assert!(matches!(rnn.per_step(&h0, &xs[1..]), Err(Error::LengthMismatch { .. })));
}
