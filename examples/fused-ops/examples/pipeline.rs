//! A three-stage producer/consumer pipeline inside the persistent kernel: the host
//! submits a stream of text records in batches; each parse task parses its records and
//! enqueues, on the device, a transform task for them, which enqueues a reduce task
//! (parse → transform → reduce, no host round trip between stages). Per-stage counts and
//! the per-key reduction are checked exactly against the host's own pass over the text.
//!
//!     cargo run --release -p fused-ops --example pipeline [records] [blocks per SM]
//!
//! The second argument caps the persistent kernel's blocks per SM (default: the example's
//! image's, `fused_ops::config`), for measuring how the record tasks scale with
//! resident warps.

use fused_ops::records::{RecordPipeline, encode};
use fused_ops::reference;
use fused_ops::timing;
use rand::Rng;
use resident::{BackendKind, Runtime};
use std::time::Instant;

struct Size {
    records: usize,
    /// Records the host writes and submits at a time.
    batch: usize,
    /// Records per parse task.
    per_task: u32,
    keys: u32,
    /// Timed passes (after one warm-up pass); every pass is checked.
    runs: usize,
}

fn gpu_size(records: usize) -> Size {
    Size { records, batch: 1 << 16, per_task: 256, keys: 4099, runs: 7 }
}

fn cpu_size() -> Size {
    Size { records: 40_000, batch: 8_192, per_task: 256, keys: 97, runs: 3 }
}

/// Text records, about 3% of them malformed or with a key out of range.
fn lines(n: usize, keys: u32) -> Vec<String> {
    let mut rng = rand::rng();
    (0..n)
        .map(|_| match rng.random_range(0..100) {
            0 => "not a record\n".to_string(),
            1 => format!("{},{}", rng.random_range(0..keys), rng.random_range(-99..99)),
            2 => format!("{},{}\n", keys + rng.random_range(0..100), 1),
            _ => format!("{},{}\n", rng.random_range(0..keys), rng.random_range(-999_999_999..=999_999_999)),
        })
        .collect()
}

/// Runs the pipeline on `rt` (a runtime that loads the example's image); true if every count matches.
fn run(rt: &Runtime, size: &Size) -> resident::Result<bool> {
    println!("{}", rt.backend());
    let text = lines(size.records, size.keys);
    let raw: Vec<_> = text.iter().map(|l| encode(l).expect("records fit 32 bytes")).collect();
    let p = RecordPipeline::new(rt, size.records as u32, size.keys)?;
    let host = Instant::now();
    let (want, table) = reference::records(&text, size.keys);
    let host_time = host.elapsed();
    // One pass: the host writes a batch, submits its parse tasks, moves on (the device
    // runs the stages of earlier batches meanwhile); then every ticket is waited for.
    // Returns the end-to-end time, the part spent writing and submitting, the parse
    // tasks, and whether the counts and the table match the host's pass exactly.
    let pass = || -> resident::Result<(std::time::Duration, std::time::Duration, u32, bool, bool)> {
        p.reset()?;
        let start = Instant::now();
        let mut tickets = vec![];
        let mut tasks = 0u32;
        for first in (0..size.records).step_by(size.batch) {
            let count = size.batch.min(size.records - first);
            p.write(first as u32, &raw[first..first + count])?;
            let t = p.parse_tasks(first as u32, count as u32, size.per_task);
            tasks += t.len() as u32;
            tickets.push(rt.submit(&t)?);
        }
        let submitted = start.elapsed();
        for t in tickets {
            t.wait()?;
        }
        let elapsed = start.elapsed();
        let got = p.counts()?;
        let counts_ok = (got.parse_tasks, got.transform_tasks, got.reduce_tasks) == (tasks, tasks, tasks)
            && (got.parsed, got.rejected, got.kept, got.dropped, got.reduced)
                == (want.parsed, want.rejected, want.kept, want.dropped, want.reduced);
        Ok((elapsed, submitted, tasks, counts_ok, p.table()? == table))
    };
    let warm_up = pass()?;
    let mut passes = (0..size.runs.max(1)).map(|_| pass()).collect::<resident::Result<Vec<_>>>()?;
    // Every pass checked, the warm-up too.
    let counts_ok = warm_up.3 && passes.iter().all(|r| r.3);
    let table_ok = warm_up.4 && passes.iter().all(|r| r.4);
    passes.sort_by_key(|r| r.0);
    let (elapsed, submitted, tasks, _, _) = passes[passes.len() / 2];
    let got = p.counts()?;
    println!(
        "{} records in batches of {} ({} parse tasks of {} records; each pushes a transform, which pushes a reduce: {} tasks in all)",
        size.records,
        size.batch,
        tasks,
        size.per_task,
        3 * tasks
    );
    println!(
        "  end to end, median of {} passes after a warm-up: {:.2} ms ({:.1} M records/s; the host's writes and submits took {:.2} ms of it); the host's own pass over the text: {:.2} ms",
        passes.len(),
        timing::ms(elapsed),
        size.records as f64 / elapsed.as_secs_f64() / 1e6,
        timing::ms(submitted),
        timing::ms(host_time)
    );
    println!("  stage      tasks  records in  out        other");
    println!("  parse      {:>5}  {:>10}  {:>9} parsed  {:>6} rejected", got.parse_tasks, size.records, got.parsed, got.rejected);
    println!("  transform  {:>5}  {:>10}  {:>9} kept    {:>6} dropped", got.transform_tasks, got.parsed, got.kept, got.dropped);
    println!("  reduce     {:>5}  {:>10}  {:>9} reduced into {} keys", got.reduce_tasks, got.kept, got.reduced, size.keys);
    println!(
        "  per-stage counts vs the host's, every pass: {}; per-key counts and sums ({} keys), every pass: {}",
        if counts_ok { "exact" } else { "MISMATCH" },
        size.keys,
        if table_ok { "exact" } else { "MISMATCH" }
    );
    Ok(counts_ok && table_ok)
}

/// A three-stage record pipeline of tasks that push tasks.
#[derive(clap::Parser)]
struct Args {
    /// Records through the pipeline (on a GPU; the CPU variant is small and fixed).
    #[arg(default_value_t = 1 << 22, value_parser = clap::value_parser!(u32).range(1..))]
    records: u32,
    /// At most this many blocks of the persistent kernel per SM (default: the runtime's).
    #[arg(value_parser = clap::value_parser!(u32).range(1..))]
    blocks_per_sm: Option<u32>,
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    let mut config = fused_ops::config(BackendKind::Auto);
    if let Some(b) = args.blocks_per_sm {
        config.max_blocks_per_sm = b;
    }
    let result = Runtime::with_config(config).and_then(|rt| {
        let size = if rt.backend().kind == BackendKind::Cuda { gpu_size(args.records as usize) } else { cpu_size() };
        run(&rt, &size)
    });
    timing::exit_with(result);
}

#[cfg(test)]
mod tests {
    /// The example's CPU variant, in CI.
    #[test]
    fn cpu_small() {
        let rt =
            resident::Runtime::with_config(resident::RuntimeConfig { cpu_workers: 4, ..fused_ops::config(resident::BackendKind::Cpu) })
                .unwrap();
        assert!(super::run(&rt, &super::cpu_size()).unwrap());
    }
}
