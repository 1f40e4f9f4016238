//! Trees of tasks spawned on the device (the `tree` task: every node marks itself and
//! pushes its children into the spawn ring) against what a CUDA programmer writes
//! instead: one launch per level, a warp per node (benches/common/baselines.rs). Three
//! trees: full, depth 4 x fanout 16 (69,905 nodes) and depth 9 x fanout 4 (349,525
//! nodes), and irregular, depth 5 x at most 16 children per node (data-dependent:
//! `irregular_fanout`).
//!
//!     cargo bench --bench spawn        # on a GPU; else the runtime's rows on the CPU backend
//!
//! One row per tree: its nodes; the runtime's time (the root submitted, its ticket
//! waited for); the rivals', run after the runtime is closed (`Runtime::close`, as
//! benches/dispatch.rs runs its baselines), on the same marks: "levels", one launch per
//! level back to back and one synchronize (`Baselines::tree_by_levels`: the host knows
//! the level sizes; full trees only), and "read-back", one launch per level whose count
//! the host copies back to size the next launch (`Baselines::tree_read_back`: what a
//! data-dependent tree costs); each with "x rival", the rival's time over the runtime's
//! (> 1: the runtime is faster). Microseconds, medians of 9 after 2 warm-up runs; after
//! each series every node of the tree has been marked once per run, and no other. On
//! the CPU backend (no CUDA) only the runtime's rows, on smaller trees (the rivals are
//! CUDA only). A profiling build (`RESIDENT_DEVICE_TIMING=1`, docs/profiling.md) also
//! prints, per tree, the workers' SM cycles a task in each step of their loop.

mod common;

use common::baselines::Baselines;
use common::median_of;
use criterion::{Criterion, criterion_group, criterion_main};
use resident::builtin::visit_irregular_tree;
use resident::{Buffer, Runtime, RuntimeConfig, Task};
use std::time::{Duration, Instant};

/// Warm-up runs and timed runs of each series.
const WARMUP: usize = 2;
const RUNS: usize = 9;

/// One tree of the bench, with its marks and the reference the marks are checked
/// against.
struct Tree {
    label: String,
    depth: u32,
    fanout: u32,
    irregular: bool,
    /// One per node of the full tree (`Task::tree_nodes`).
    marks: Buffer<u32>,
    /// Whether each node belongs to the tree (all of them in a full tree).
    member: Vec<bool>,
    /// Nodes in the tree.
    nodes: u32,
    /// Nodes in its widest level.
    widest: usize,
}

impl Tree {
    fn new(rt: &Runtime, depth: u32, fanout: u32, irregular: bool) -> Self {
        let len = Task::tree_nodes(depth, fanout).unwrap() as usize;
        let mut member = vec![!irregular; len];
        let mut widths = vec![0usize; depth as usize + 1];
        if irregular {
            visit_irregular_tree(0, depth, fanout, &mut |n, d| {
                member[n as usize] = true;
                widths[(depth - d) as usize] += 1;
            });
        } else {
            for (l, w) in widths.iter_mut().enumerate() {
                *w = (fanout as usize).pow(l as u32);
            }
        }
        let label = format!("{} {depth} x {}{fanout}", if irregular { "irregular" } else { "full" }, if irregular { "<= " } else { "" });
        let nodes = member.iter().filter(|&&m| m).count() as u32;
        Self {
            label,
            depth,
            fanout,
            irregular,
            marks: rt.buffer::<u32>(len).unwrap(),
            member,
            nodes,
            widest: *widths.iter().max().unwrap(),
        }
    }

    /// The root task of the tree.
    fn root(&self) -> Task {
        if self.irregular {
            Task::irregular_tree(self.marks.all(), 0, self.depth, self.fanout)
        } else {
            Task::tree(self.marks.all(), 0, self.depth, self.fanout)
        }
    }

    /// Zeroes the marks (before a series).
    fn reset(&self) {
        self.marks.write(&vec![0; self.marks.len()]).unwrap();
    }

    /// After a series: every node of the tree marked once per run, every other node 0.
    fn check(&self, what: &str) {
        let runs = (WARMUP + RUNS) as u32;
        let marks = self.marks.read().unwrap();
        for (n, (&m, &member)) in marks.iter().zip(&self.member).enumerate() {
            let want = if member { runs } else { 0 };
            assert_eq!(m, want, "{what}, {}: node {n} marked {m} times in {runs} runs, want {want}", self.label);
        }
    }
}

/// The median time of `run` over a series, the marks zeroed first and checked after.
fn series(tree: &Tree, what: &str, mut run: impl FnMut()) -> Duration {
    tree.reset();
    let t = median_of(
        || {
            let start = Instant::now();
            run();
            start.elapsed()
        },
        WARMUP,
        RUNS,
    );
    tree.check(what);
    t
}

fn us(t: Duration) -> String {
    format!("{:.1}", t.as_secs_f64() * 1e6)
}

fn bench(c: &mut Criterion) {
    let cuda = resident::cuda_available();
    let base = if cuda { RuntimeConfig::cuda() } else { RuntimeConfig { cpu_workers: 2, ..RuntimeConfig::cpu() } };
    let mut config = RuntimeConfig { capacity: 1 << 17, spawn_capacity: 1 << 20, residency: resident::Residency::Always, ..base };
    // `SPAWN_BLOCKS_PER_SM=1`: half the worker warps (what the trees' speed owes to
    // latency hidden by more warps, against what one SM's issue rate bounds).
    if let Some(n) = std::env::var("SPAWN_BLOCKS_PER_SM").ok().and_then(|v| v.parse().ok()) {
        config.max_blocks_per_sm = n;
    }
    let rt = Runtime::with_config(config).unwrap();
    eprintln!("{}", rt.backend());
    // (depth, fanout, irregular): on the CPU backend, smaller trees of the same shapes.
    let shapes: &[(u32, u32, bool)] =
        if cuda { &[(4, 16, false), (9, 4, false), (5, 16, true)] } else { &[(3, 16, false), (6, 4, false), (4, 16, true)] };
    // Every buffer is made before `close` (a closed runtime makes none).
    let trees: Vec<Tree> = shapes.iter().map(|&(depth, fanout, irregular)| Tree::new(&rt, depth, fanout, irregular)).collect();
    let runtime: Vec<Duration> = trees
        .iter()
        .map(|t| {
            // Profiling builds (`RESIDENT_DEVICE_TIMING`, docs/profiling.md): the workers'
            // cycles per step over the series.
            let before = rt.probe().device_steps();
            let d = series(t, "runtime", || rt.submit(&[t.root()]).unwrap().wait().unwrap());
            common::print_device_steps(&format!("{}: ", t.label), before, rt.probe().device_steps());
            d
        })
        .collect();
    // The rivals run with the persistent kernel stopped (buffers and module stay):
    // nothing resident shares the SMs with them.
    let mut rivals: Vec<(Option<Duration>, Option<Duration>)> = vec![(None, None); trees.len()];
    if cuda {
        rt.close().unwrap();
        let b = Baselines::new(&rt, 1).unwrap();
        let widest = trees.iter().map(|t| t.widest).max().unwrap();
        let mut scratch = b.tree_scratch(widest, trees.iter().map(|t| t.depth).max().unwrap()).unwrap();
        for (t, r) in trees.iter().zip(&mut rivals) {
            if !t.irregular {
                r.0 = Some(series(t, "levels", || b.tree_by_levels(&t.marks, t.depth, t.fanout).unwrap()));
            }
            r.1 = Some(series(t, "read-back", || {
                let n = b.tree_read_back(&mut scratch, &t.marks, t.depth, t.fanout, t.irregular).unwrap();
                assert_eq!(n, t.nodes, "read-back, {}: nodes launched", t.label);
            }));
        }
    }
    println!(
        "\nspawned trees against one launch per level (rivals), us, medians of {RUNS} after {WARMUP}; x rival: the rival's time over the runtime's (> 1: the runtime is faster)"
    );
    println!("{:<20} {:>8} {:>11} {:>11} {:>8} {:>13} {:>8}", "tree", "nodes", "runtime", "levels", "x rival", "read-back", "x rival");
    for ((t, &ours), &(levels, read_back)) in trees.iter().zip(&runtime).zip(&rivals) {
        let cols = |rival: Option<Duration>| match rival {
            Some(r) => (us(r), format!("{:.2}", r.as_secs_f64() / ours.as_secs_f64())),
            None => ("-".into(), "-".into()),
        };
        let ((lv, lx), (rb, rx)) = (cols(levels), cols(read_back));
        println!("{:<20} {:>8} {:>11} {lv:>11} {lx:>8} {rb:>13} {rx:>8}", t.label, t.nodes, us(ours));
    }
    c.bench_function("spawn/noop", |b| b.iter(|| ()));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_millis(100)).measurement_time(Duration::from_millis(200));
    targets = bench
}
criterion_main!(benches);
