//! Stream priorities: two streams each get a long sequence of kernels that fill the
//! GPU. Both are released at the same instant (they wait on one event), the
//! low-priority stream's work enqueued first. With a high and a low priority, the
//! high-priority stream's blocks are scheduled first and it finishes long before the
//! other; with equal priorities the two share the GPU and finish together.
//!
//!     cargo run --release --example priorities [-- --kernels 20 --iters 400]
//!
//! Without a CUDA GPU it runs on the CPU device (`Device::auto`), whose streams are
//! threads that record priorities but do not apply them: there both finish together,
//! in either case (and the work is smaller: 1 Mi floats, 20 multiply-adds by default).

use clap::Parser;
use resident::stream::{Device, Event};
use std::time::Duration;

/// Two streams of equal work, one of high priority enqueued second: which finishes first.
#[derive(Parser)]
struct Args {
    /// Kernels each stream runs.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    kernels: u32,
    /// Multiply-adds per element in each kernel (default: 400 on a GPU, 20 on the CPU).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    iters: Option<u32>,
}

fn main() -> resident::Result<()> {
    let args = Args::parse();
    let gpu = Device::auto()?;
    let cpu = gpu.is_cpu();
    let (kernels, iters) = (args.kernels, args.iters.unwrap_or(if cpu { 20 } else { 400 }));
    let p = gpu.priorities();
    println!("device: {}; stream priorities: least {} (default), greatest {}", gpu.name(), p.least, p.greatest);
    if cpu {
        println!("(no CUDA GPU, or a build without PTX: the CPU device's streams are threads, which do not apply priorities)");
    }
    let (n, what) = if cpu { (1 << 20, "1 Mi floats") } else { (1 << 24, "16 Mi floats, filling every SM") };
    println!("each stream: {kernels} kernels of {iters} multiply-adds per element over {what}");

    // Each stream its own buffer: no dependency between the two streams but the device.
    let (x_low, x_high) = (gpu.alloc_zeroed::<f32>(n)?, gpu.alloc_zeroed::<f32>(n)?);
    let gate_flag = gpu.alloc_zeroed::<u32>(1)?;

    for (label, prio_a, prio_b) in [("high vs low", p.low(), p.high()), ("equal", p.low(), p.low())] {
        let gate = gpu.stream()?;
        let a = gpu.stream_with_priority(prio_a)?; // enqueued first
        let b = gpu.stream_with_priority(prio_b)?;
        let (go, end_a, end_b) = (Event::new(&gpu)?, Event::new(&gpu)?, Event::new(&gpu)?);
        // Hold both streams until everything is enqueued, then release them together.
        gate.spin_write(gate_flag.view(), 1, Duration::from_millis(20))?;
        gate.record(&go)?;
        a.wait_event(&go)?;
        b.wait_event(&go)?;
        for _ in 0..kernels {
            a.pipeline(x_low.view(), x_low.view(), iters)?;
        }
        a.record(&end_a)?;
        for _ in 0..kernels {
            b.pipeline(x_high.view(), x_high.view(), iters)?;
        }
        b.record(&end_b)?;
        a.synchronize()?;
        b.synchronize()?;
        let (ta, tb) = (end_a.elapsed_ms_since(&go)?, end_b.elapsed_ms_since(&go)?);
        println!();
        println!("{label}:");
        println!("  stream A (priority {:>2}, enqueued first) finished at {ta:8.2} ms", a.priority());
        println!("  stream B (priority {:>2}, enqueued second) finished at {tb:8.2} ms", b.priority());
        if prio_a != prio_b {
            let verdict = if tb < ta { "yes" } else { "NO" };
            let note = if cpu { "; the CPU device does not apply priorities" } else { "" };
            println!("  the high-priority stream finished first: {verdict} (B at {:.0}% of A's time{note})", 100.0 * tb / ta);
        } else {
            println!("  finish times differ by {:.1}% of the later one", 100.0 * (ta - tb).abs() / ta.max(tb));
        }
    }
    Ok(())
}
