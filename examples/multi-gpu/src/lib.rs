//! The host side of resident's multi-GPU example (`src/main.rs` says what it does):
//! runtimes on the devices there are, and the two-stage job, checked exactly. Written
//! only against resident's public API.

use multi_gpu_device::{BINS, CountChunk};
use rand::Rng;
use resident::{BackendKind, DeviceTask, Link, Result, Runtime, Task};
use std::time::{Duration, Instant};

/// Values per stage-1 task.
pub const CHUNK: u32 = 16 * 1024;

/// A runtime of the example's image on `device` and `kind`.
pub fn runtime(device: usize, kind: BackendKind) -> Result<Runtime> {
    Runtime::builder().kernel(resident::kernel_image!("two_stage")).backend(kind).config(|c| c.device = device).build()
}

/// The two runtimes: one per GPU with two GPUs; with one, A on it and B on the CPU
/// backend; with none, two CPU runtimes standing in for devices 0 and 1.
pub fn runtimes() -> Result<(Runtime, Runtime)> {
    let gpus = if resident::cuda_available() { resident::device_count() } else { 0 };
    Ok(match gpus {
        0 => (runtime(0, BackendKind::Cpu)?, runtime(1, BackendKind::Cpu)?),
        1 => (runtime(0, BackendKind::Auto)?, runtime(1, BackendKind::Cpu)?),
        _ => (runtime(0, BackendKind::Auto)?, runtime(1, BackendKind::Auto)?),
    })
}

/// What one run of the job did.
#[derive(Debug)]
pub struct Outcome {
    /// Every run's bins matched the host's count, and every value was counted once.
    pub exact: bool,
    /// Median time of the runs, submit to the last stage-2 task done.
    pub median: Duration,
    /// Stage-1 tasks (each pushed one stage-2 task).
    pub tasks: usize,
    /// Whether the pushes went peer to peer (`Link::peer`) rather than
    /// through the host.
    pub peer: bool,
}

/// Which link the stages go through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Through the host (`Link::new`): any two runtimes.
    Host,
    /// Straight into the other device's memory (`Link::peer`) where the two
    /// runtimes allow it (two CUDA devices with peer access), else through the host.
    PeerIfPossible,
}

/// Runs the job `runs` times on `n` fresh random values: stage 1 on `a`, stage 2 on `b`,
/// the stage-2 tasks pushed through a link of `path`.
pub fn two_stage(a: &Runtime, b: &Runtime, n: u32, runs: usize, path: Path) -> Result<Outcome> {
    let mut rng = rand::rng();
    let data: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let shift = rng.random_range(0..8);
    let mut want = [0u32; BINS as usize];
    for &v in &data {
        want[((v >> shift) % BINS) as usize] += 1;
    }
    let on_a = a.buffer_from(&data)?;
    let bins = b.buffer::<u32>(BINS as usize)?;
    let link = match path {
        Path::PeerIfPossible => Link::peer(a, b).or_else(|_| Link::new(a, b))?,
        Path::Host => Link::new(a, b)?,
    };
    let peer = link.is_peer();
    let tasks: Vec<Task> = (0..n.div_ceil(CHUNK))
        .map(|k| {
            let range = (k * CHUNK) as usize..((k + 1) * CHUNK).min(n) as usize;
            CountChunk { data: on_a.slice(range), bins: bins.all(), link: link.id(), shift }.task()
        })
        .collect();
    let mut exact = true;
    let mut times = vec![];
    for _ in 0..runs {
        // Poisoned, then zeroed: a run that counts nothing cannot pass on stale bins.
        bins.write(&[u32::MAX; BINS as usize])?;
        bins.write(&[0; BINS as usize])?;
        let t = Instant::now();
        let counted = a.batch(&tasks).results().submit()?.results()?;
        link.flush()?;
        times.push(t.elapsed());
        let got = bins.read()?;
        if got[..] != want[..] || counted.iter().sum::<u64>() != n as u64 {
            eprintln!("  bins {got:?}, want {want:?}");
            exact = false;
        }
    }
    link.close()?;
    times.sort();
    Ok(Outcome { exact, median: times[times.len() / 2], tasks: tasks.len(), peer })
}
