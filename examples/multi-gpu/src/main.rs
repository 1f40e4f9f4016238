//! resident's multi-GPU example: a two-stage job split across two devices. Stage 1 runs
//! on device A: each task counts a chunk of values into 8 bins and pushes a stage-2 task
//! carrying its counts into device B's runtime through a link (`TaskCx::push_to`, no
//! host round trip between the stages); stage 2 runs on B and adds the counts to B's
//! bins. The bins are checked exactly against the host's own count, on fresh random
//! values, with the bins poisoned before every run.
//!
//!     cargo run --release -p multi-gpu
//!
//! Two GPUs: one runtime on each, the job run twice: through the host (`Link::new`), then
//! peer to peer (`Link::peer`: stage 1's pushes land in device B's memory over
//! NVLink or PCIe). One GPU: A on it, B on the CPU backend (a link through the host
//! joins any two runtimes). None: two CPU runtimes standing in for devices 0 and 1.

use multi_gpu::{Path, runtimes, two_stage};
use resident::{BackendKind, Result};

/// Two runtimes (two GPUs, or two CPU runtimes standing in for them) joined by a link:
/// stage 1 on one pushes its results into the other's queue, every result checked.
#[derive(clap::Parser)]
struct Args {}

fn main() {
    <Args as clap::Parser>::parse();
    match run() {
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

fn run() -> Result<bool> {
    let (a, b) = runtimes()?;
    println!("stage 1 on device {}: {}", a.backend().device, a.backend());
    println!("stage 2 on device {}: {}", b.backend().device, b.backend());
    let n: u32 = if a.backend().kind == BackendKind::Cuda { 1 << 24 } else { 1 << 20 };
    let mut exact = true;
    for path in [Path::Host, Path::PeerIfPossible] {
        let o = two_stage(&a, &b, n, 5, path)?;
        println!(
            "{n} values, {} stage-1 tasks on device {}, each pushing a stage-2 task to device {} ({}): {:.3} ms median of 5 ({:.2} G values/s), bins {}",
            o.tasks,
            a.backend().device,
            b.backend().device,
            if o.peer { "peer to peer" } else { "through the host" },
            o.median.as_secs_f64() * 1e3,
            n as f64 / o.median.as_secs_f64() / 1e9,
            if o.exact { "exact" } else { "WRONG" }
        );
        exact &= o.exact;
        if !o.peer && path == Path::PeerIfPossible {
            println!("  (no peer path between these runtimes: both stages went through the host)");
        }
    }
    a.close()?;
    b.close()?;
    Ok(exact)
}
