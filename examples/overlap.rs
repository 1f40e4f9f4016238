//! Copy/compute overlap with streams: a large array goes host → device → kernel →
//! host, first serially on one stream, then in N chunks spread over several streams
//! (N = 1, 2, 4, 8, 16), so that chunk k's kernel runs while chunk k+1 uploads and
//! chunk k-1 downloads. Prints each time, the speedup over the serial run, and the
//! pipeline's bound: max(H2D, kernel, D2H) + one chunk of the other two stages.
//!
//!     cargo run --release --example overlap [-- --mib 256 --iters auto --streams 4]
//!
//! The kernel's arithmetic per element (`--iters`) is tuned by default so that the
//! kernel takes about as long as the upload: the case where overlap pays most.
//!
//! Without a CUDA GPU it runs on the CPU device (`Device::auto`): streams are threads,
//! copies are memcpys, and the overlap is of threads on the host's cores (32 MiB by
//! default there).

use resident::stream::{Device, Event};

const REPS: usize = 5;

/// Copy/compute overlap: a large array host → device → kernel → host, serially, then in
/// chunks over several streams.
#[derive(clap::Parser)]
struct Args {
    /// MiB of floats to move (default: 256 on a GPU, 32 on the CPU device).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=65536))]
    mib: Option<u32>,
    /// Multiply-adds per element in the kernel, or `auto`: tuned so that the kernel
    /// takes about as long as the upload.
    #[arg(long, default_value = "auto", value_parser = parse_iters)]
    iters: Iters,
    /// Streams the chunks go round.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    streams: u32,
}

/// `--iters`: a count, or `auto`.
#[derive(Clone, Copy)]
struct Iters(Option<u32>);

fn parse_iters(s: &str) -> Result<Iters, String> {
    match s {
        "auto" => Ok(Iters(None)),
        n => match n.parse::<u32>() {
            Ok(n) if n > 0 => Ok(Iters(Some(n))),
            _ => Err(format!("`{n}`: a positive number of multiply-adds, or `auto`")),
        },
    }
}

fn ms(end: &Event, start: &Event) -> resident::Result<f64> {
    Ok(end.elapsed_ms_since(start)? as f64)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> resident::Result<()> {
    let a = <Args as clap::Parser>::parse();
    let gpu = Device::auto()?;
    if gpu.is_cpu() {
        println!("overlap: no CUDA GPU (or a build without PTX): running on the CPU device");
    }
    let mib = a.mib.map_or(if gpu.is_cpu() { 32 } else { 256 }, |m| m as usize);
    let n = mib * (1 << 20) / 4;
    let bytes = (n * 4) as f64;
    let mut input = gpu.pinned_write_combined::<f32>(n)?;
    let mut output = gpu.pinned::<f32>(n)?;
    for (i, v) in input.iter_mut().enumerate() {
        *v = (i % 1024) as f32 / 1024.0;
    }
    let din = gpu.alloc_zeroed::<f32>(n)?;
    let dout = gpu.alloc_zeroed::<f32>(n)?;
    let main_stream = gpu.stream()?;
    let ev: Vec<Event> = (0..4).map(|_| gpu.event()).collect::<resident::Result<_>>()?;

    // Serial, one stream, with events between the stages: the stage times.
    let serial = |iters: u32, output: &mut resident::stream::PinnedBuffer<f32>| -> resident::Result<[f64; 4]> {
        gpu.scope(|s| {
            let st = s.adopt(&main_stream)?;
            st.record(&ev[0])?;
            st.copy_h2d(&input, &din)?;
            st.record(&ev[1])?;
            st.pipeline(din.view(), dout.view(), iters)?;
            st.record(&ev[2])?;
            st.copy_d2h(&dout, &mut *output)?;
            st.record(&ev[3])?;
            Ok(())
        })?;
        Ok([ms(&ev[1], &ev[0])?, ms(&ev[2], &ev[1])?, ms(&ev[3], &ev[2])?, ms(&ev[3], &ev[0])?])
    };

    let iters = match a.iters.0 {
        Some(i) => i,
        None => {
            // Double until the kernel outlasts the upload, then interpolate.
            let mut it = 8u32;
            loop {
                let t = serial(it, &mut output)?;
                if t[1] >= t[0] || it >= 1 << 16 {
                    break ((it as f64 * t[0] / t[1]).round() as u32).max(1);
                }
                it *= 2;
            }
        }
    };
    let stage: Vec<[f64; 4]> = (0..REPS).map(|_| serial(iters, &mut output)).collect::<resident::Result<_>>()?;
    let pick = |k: usize| median(stage.iter().map(|t| t[k]).collect());
    let (h2d, kern, d2h, total) = (pick(0), pick(1), pick(2), pick(3));
    let want = resident_device::kernels::pipeline::element(input[n / 2], iters);
    assert!((output[n / 2] - want).abs() <= 1e-6, "wrong result: {} != {want}", output[n / 2]);

    let units = if gpu.is_cpu() { "cores" } else { "SMs" };
    println!("device: {} ({} {units}); {mib} MiB of f32, kernel {iters} multiply-adds per element", gpu.name(), gpu.sm_count());
    println!(
        "stages (one stream): H2D {h2d:.2} ms ({:.1} GB/s), kernel {kern:.2} ms, D2H {d2h:.2} ms ({:.1} GB/s); serial total {total:.2} ms",
        bytes / h2d / 1e6,
        bytes / d2h / 1e6
    );
    if !gpu.is_cpu() {
        println!(
            "nominal PCIe (45 GB/s H2D, 49 GB/s D2H pinned on the H100): H2D {:.2} ms, D2H {:.2} ms",
            bytes / 45e9 * 1e3,
            bytes / 49e9 * 1e3
        );
    }
    println!();
    println!("{:>7} {:>8} {:>10} {:>9} {:>10} {:>11}", "chunks", "streams", "time ms", "speedup", "bound ms", "time/bound");

    let start = gpu.event()?;
    let end = gpu.event()?;
    for chunks in [1usize, 2, 4, 8, 16] {
        let nstreams = (a.streams as usize).min(chunks).max(1);
        let chunk = n.div_ceil(chunks);
        let mut times = vec![];
        for _ in 0..REPS {
            main_stream.record(&start)?;
            gpu.scope_after(&main_stream, |s| {
                let streams: Vec<_> = (0..nstreams).map(|_| s.stream()).collect::<resident::Result<_>>()?;
                let pieces = input.view().chunks(chunk).zip(output.view_mut().chunks(chunk));
                for (k, (src, dst)) in pieces.enumerate() {
                    let st = &streams[k % nstreams];
                    let r = k * chunk..k * chunk + src.len();
                    st.copy_h2d(src, din.slice(r.clone()))?;
                    st.pipeline(din.slice(r.clone()), dout.slice(r.clone()), iters)?;
                    st.copy_d2h(dout.slice(r), dst)?;
                }
                for st in &streams {
                    main_stream.wait_stream(st)?;
                }
                main_stream.record(&end)?;
                Ok(())
            })?;
            main_stream.synchronize()?;
            times.push(ms(&end, &start)?);
        }
        let t = median(times);
        let max = h2d.max(kern).max(d2h);
        let bound = max + (h2d + kern + d2h - max) / chunks as f64;
        println!("{chunks:>7} {nstreams:>8} {t:>10.2} {:>8.2}x {bound:>10.2} {:>11.3}", total / t, t / bound);
    }
    println!();
    println!("bound = max(H2D, kernel, D2H) + (the other two stages) / chunks: the pipeline's fill and drain");
    if gpu.is_cpu() {
        println!(
            "(on the CPU device the stages share the cores and the memory bandwidth: the bound, which assumes separate engines, need not hold)"
        );
    }
    check_output(&input, &output, iters);
    Ok(())
}

fn check_output(input: &[f32], output: &[f32], iters: u32) {
    let bad = input
        .iter()
        .zip(output)
        .step_by(4099)
        .filter(|&(&x, &o)| (o - resident_device::kernels::pipeline::element(x, iters)).abs() > 1e-6)
        .count();
    assert_eq!(bad, 0, "the chunked pipeline computed wrong values");
    println!("results checked against the host");
}
