//! Tasks spawned on the device (the spawn ring): how many a second a tree of `tree`
//! tasks reaches (every node marks itself and pushes its children), against the same
//! number of `mark` tasks submitted as a resident list, on the default grid and on
//! grids of fewer warps. Written in session 22 to test a hypothesis about the peer
//! path's bursts (0.9 M pushes a second, issue 23): the spawn ring's pops are a
//! compare-and-swap that every idle warp tries, so one success costs about one
//! contended atomic's latency; if so, fewer warps pop faster.
//!
//!     cargo bench --bench spawn        # on a GPU (.gpu/run.sh); else on the CPU backend
//!
//! Rows: nodes, microseconds (median of 9 after 2), M tasks/s, for each grid.

mod common;

use common::median_of;
use criterion::{Criterion, criterion_group, criterion_main};
use resident::{Runtime, RuntimeConfig, Task};
use std::time::{Duration, Instant};

fn bench(c: &mut Criterion) {
    let cuda = resident::cuda_available();
    let base = if cuda { RuntimeConfig::cuda() } else { RuntimeConfig { cpu_workers: 2, ..RuntimeConfig::cpu() } };
    println!("\nspawned trees against listed tasks, medians of 9 (us, M tasks/s)");
    println!("{:<44} {:>8} {:>10} {:>9} {:>10} {:>9}", "grid", "nodes", "tree us", "M/s", "list us", "M/s");
    // (label, threads per block, blocks per SM): the default, then fewer warps.
    let grids: &[(&str, u32, u32)] =
        if cuda { &[("default", 0, 2), ("1 block/SM, 128 threads", 128, 1), ("1 block/SM, 32 threads", 32, 1)] } else { &[("cpu", 0, 2)] };
    for &(label, threads, per_sm) in grids {
        let config = RuntimeConfig {
            capacity: 1 << 17,
            block_threads: threads,
            max_blocks_per_sm: per_sm,
            residency: resident::Residency::Always,
            ..base.clone()
        };
        let rt = match Runtime::with_config(config) {
            Ok(rt) => rt,
            Err(e) => {
                println!("{label}: {e}");
                continue;
            }
        };
        let grid = format!("{label} ({} warps)", rt.backend().workers);
        for (depth, fanout) in [(4u32, 16u32), (5, 8)] {
            let nodes = Task::tree_nodes(depth, fanout).unwrap() as usize;
            let marks = rt.buffer::<u32>(nodes).unwrap();
            let tree = || {
                let start = Instant::now();
                rt.submit(&[Task::tree(marks.all(), 0, depth, fanout)]).unwrap().wait().unwrap();
                start.elapsed()
            };
            let t_tree = median_of(tree, 2, 9);
            // Every node ran exactly once per run (2 + 9 runs).
            assert!(marks.read().unwrap().iter().all(|&m| m == 11), "a node ran other than once per run");
            let list = rt.upload_tasks(&(0..nodes as u32).map(|i| Task::mark(marks.all(), i)).collect::<Vec<_>>()).unwrap();
            let t_list = median_of(
                || {
                    let start = Instant::now();
                    rt.submit_list(&list).unwrap().wait().unwrap();
                    start.elapsed()
                },
                2,
                9,
            );
            let rate = |t: Duration| nodes as f64 / t.as_secs_f64() / 1e6;
            println!(
                "{:<44} {:>8} {:>10.1} {:>9.2} {:>10.1} {:>9.2}",
                grid,
                nodes,
                t_tree.as_secs_f64() * 1e6,
                rate(t_tree),
                t_list.as_secs_f64() * 1e6,
                rate(t_list)
            );
        }
        rt.close().unwrap();
    }
    c.bench_function("spawn/noop", |b| b.iter(|| ()));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_millis(100)).measurement_time(Duration::from_millis(200));
    targets = bench
}
criterion_main!(benches);
