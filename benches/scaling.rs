//! Where a resident list's time goes: replay time against batch size (slope = per-task
//! cost, intercept = fixed cost) for noop and axpy, with 1 and 2 blocks per SM (halving
//! the warps doubles each warp's serial chain of tasks; a bound by a resource every
//! task passes through would not care), and with completion segments of 1024 and 64
//! tasks (a bound by the adds on the segment counter would fall with the smaller
//! segments). A diagnostic printed as a table; medians of 51 replays.
//!
//!     cargo bench --bench scaling          # on a GPU machine

mod common;

use common::median;
use resident::{Runtime, RuntimeConfig, Task};

const SLICE: usize = 1024;
const SIZES: [usize; 6] = [1_000, 2_500, 5_000, 10_000, 20_000, 40_000];

fn main() {
    if !resident::cuda_available() {
        eprintln!("scaling: needs a CUDA GPU; nothing to do");
        return;
    }
    let max = *SIZES.last().unwrap();
    println!("{:>10} {:>8} {:>8} {:>10} {:>10} {:>10} {:>10}", "blocks/SM", "segment", "tasks", "noop us", "ns/task", "axpy us", "GB/s");
    for (blocks, segment) in [(2u32, 1024u32), (1, 1024), (2, 64)] {
        let rt = Runtime::with_config(RuntimeConfig {
            max_blocks_per_sm: blocks,
            segment_tasks: segment,
            capacity: 1 << 17,
            ..RuntimeConfig::cuda()
        })
        .unwrap();
        eprintln!("{}", rt.backend());
        let x = rt.buffer_from(&vec![0.5f32; max * SLICE]).unwrap();
        let y = rt.buffer::<f32>(max * SLICE).unwrap();
        for n in SIZES {
            let noop = rt.upload_tasks(&(0..n as u64).map(Task::noop).collect::<Vec<_>>()).unwrap();
            let axpy = rt
                .upload_tasks(
                    &(0..n)
                        .map(|i| Task::axpy(1e-3, x.slice(i * SLICE..(i + 1) * SLICE), y.slice(i * SLICE..(i + 1) * SLICE)))
                        .collect::<Vec<_>>(),
                )
                .unwrap();
            let tn = median(|| noop.submit().unwrap().wait().unwrap(), 5, 51);
            let ta = median(|| axpy.submit().unwrap().wait().unwrap(), 5, 51);
            let bytes = (n * SLICE * 12) as f64;
            println!(
                "{blocks:>10} {segment:>8} {n:>8} {:>10.1} {:>10.2} {:>10.1} {:>10.0}",
                tn.as_secs_f64() * 1e6,
                tn.as_secs_f64() * 1e9 / n as f64,
                ta.as_secs_f64() * 1e6,
                bytes / ta.as_secs_f64() / 1e9
            );
        }
        rt.shutdown().unwrap();
    }
}
