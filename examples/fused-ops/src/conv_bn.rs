//! Fused 3×3 convolution + training-mode batch normalization + ReLU on the persistent
//! queue (a runtime that loads the example's image, [`crate::config`]): every conv tile is a task that also stores its
//! per-channel moments and signals a device counter; the normalize tasks wait on that
//! counter (`Task::after`) and are released on the device once every tile is done.
//! One submission, no launch and no host round trip between the stages.
//!
//! ```
//! use fused_ops::conv_bn::{ConvBn, ConvBnInputs};
//! use fused_ops::ConvGeom;
//! use resident::{BackendKind, Runtime, RuntimeConfig};
//! let rt = Runtime::with_config(fused_ops::config(BackendKind::Cpu))?;
//! let g = ConvGeom::checked(2, 3, 8, 5, 5).unwrap();
//! let inputs = ConvBnInputs::filled(g, |i| (i % 7) as f32 * 0.1);
//! let cb = ConvBn::new(&rt, &inputs, 1e-5)?;
//! let done = rt.counter()?;
//! cb.run_fused(&rt, &done, 0)?;
//! let out = cb.out.read()?;
//! assert!(out.iter().all(|v| v.is_finite() && *v >= 0.0));
//! # Ok::<(), resident::Error>(())
//! ```

use fused_ops_device::layout::{BnNormalize, CONV_COB, ConvGeom, ConvTile, PackedGeom};
use resident::{Buffer, Counter, CounterId, Error, Result, Runtime, Task};
use resident_device::DeviceTask;

/// Images per normalize task (a task normalizes one channel of this many images).
pub const NORM_CHUNK: u32 = 4;

/// Inputs of a conv + batch-norm problem, in PyTorch's layouts: `x` NCHW, `w` OIHW
/// (`[c_out][c_in][3][3]`), `gamma` and `beta` per output channel.
#[derive(Clone, Debug)]
pub struct ConvBnInputs {
    pub geom: ConvGeom,
    pub x: Vec<f32>,
    pub w: Vec<f32>,
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
}

impl ConvBnInputs {
    /// Inputs whose every element is `f(i)` over one running index (x, then w, then
    /// gamma, then beta): for doc examples; the examples draw random inputs.
    pub fn filled(geom: ConvGeom, mut f: impl FnMut(usize) -> f32) -> Self {
        let mut i = 0;
        let mut take = |n: u32| -> Vec<f32> {
            (0..n)
                .map(|_| {
                    i += 1;
                    f(i)
                })
                .collect()
        };
        let (x, w, gamma, beta) = (take(geom.x_len()), take(geom.w_len()), take(geom.c_out), take(geom.c_out));
        Self { geom, x, w, gamma, beta }
    }
}

/// OIHW weights into the tiles' layout `[c_out / 8][c_in][3][3][8]`: the eight output
/// channels of a tile are adjacent for each input channel and tap, one 32-byte load.
pub fn pack_weights(g: &ConvGeom, w: &[f32]) -> Result<Vec<f32>> {
    if w.len() != g.w_len() as usize {
        return Err(Error::LengthMismatch { expected: g.w_len() as usize, got: w.len() });
    }
    let (ci_n, cob) = (g.c_in as usize, CONV_COB as usize);
    let mut p = vec![0f32; w.len()];
    for co in 0..g.c_out as usize {
        for ci in 0..ci_n {
            for t in 0..9 {
                p[((co / cob * ci_n + ci) * 9 + t) * cob + co % cob] = w[(co * ci_n + ci) * 9 + t];
            }
        }
    }
    Ok(p)
}

/// A conv + batch-norm problem's buffers on a runtime: inputs, the conv output `y`, the
/// per-tile partial moments, `affine` (`[gamma | beta | batch mean | batch var]`) and
/// the result `out`.
pub struct ConvBn {
    pub geom: ConvGeom,
    pub eps: f32,
    pub x: Buffer<f32>,
    /// Packed weights ([`pack_weights`]).
    pub w: Buffer<f32>,
    pub y: Buffer<f32>,
    pub partials: Buffer<f32>,
    pub affine: Buffer<f32>,
    pub out: Buffer<f32>,
}

impl ConvBn {
    /// Uploads the inputs; `y`, the partials and `out` start zeroed.
    pub fn new(rt: &Runtime, inputs: &ConvBnInputs, eps: f32) -> Result<Self> {
        let g = inputs.geom;
        for (got, want) in [(inputs.x.len(), g.x_len()), (inputs.gamma.len(), g.c_out), (inputs.beta.len(), g.c_out)] {
            if got != want as usize {
                return Err(Error::LengthMismatch { expected: want as usize, got });
            }
        }
        let mut affine = inputs.gamma.clone();
        affine.extend_from_slice(&inputs.beta);
        affine.resize(g.affine_len() as usize, 0.0);
        Ok(Self {
            geom: g,
            eps,
            x: rt.buffer_from(&inputs.x)?,
            w: rt.buffer_from(&pack_weights(&g, &inputs.w)?)?,
            y: rt.buffer(g.y_len() as usize)?,
            partials: rt.buffer(g.partials_len() as usize)?,
            affine: rt.buffer_from(&affine)?,
            out: rt.buffer(g.y_len() as usize)?,
        })
    }

    /// The fused pass as tasks: every conv tile signals `done`; the normalize tasks (one
    /// per channel and [`NORM_CHUNK`] images) wait until `done` reaches
    /// `signaled + tiles`, `signaled` being what `done` counted before this pass (a
    /// counter only grows: reuse one across passes and add `tiles` each time).
    pub fn fused_tasks(&self, done: CounterId, signaled: u32) -> Vec<Task> {
        let g = self.geom;
        let (x, w, y, part, aff, out) =
            (self.x.handle(), self.w.handle(), self.y.handle(), self.partials.handle(), self.affine.handle(), self.out.handle());
        let geom = PackedGeom::of(&g);
        let mut tasks: Vec<Task> =
            (0..g.tiles()).map(|tile| ConvTile { x, w, y, partials: part, geom, tile }.task().signals(done)).collect();
        let release = signaled.wrapping_add(g.tiles());
        for c in 0..g.c_out {
            for n0 in (0..g.n).step_by(NORM_CHUNK as usize) {
                let count = NORM_CHUNK.min(g.n - n0);
                tasks.push(
                    BnNormalize { y, out, partials: part, affine: aff, geom, c, n0, count, eps: self.eps }.task().after(done, release),
                );
            }
        }
        tasks
    }

    /// Runs one fused pass and waits for it (see [`ConvBn::fused_tasks`] for `signaled`).
    pub fn run_fused(&self, rt: &Runtime, done: &Counter, signaled: u32) -> Result<()> {
        rt.submit(&self.fused_tasks(done.id(), signaled))?.wait()
    }

    /// Fills `y`, the partials and `out` with NaN, so that an element a pass fails to
    /// write shows.
    pub fn poison(&self) -> Result<()> {
        let g = self.geom;
        self.y.write(&vec![f32::NAN; g.y_len() as usize])?;
        self.partials.write(&vec![f32::NAN; g.partials_len() as usize])?;
        self.out.write(&vec![f32::NAN; g.y_len() as usize])
    }

    /// The batch mean and biased variance per channel, as the last pass stored them.
    pub fn batch_stats(&self) -> Result<(Vec<f32>, Vec<f32>)> {
        let a = self.affine.read()?;
        let c = self.geom.c_out as usize;
        Ok((a[2 * c..3 * c].to_vec(), a[3 * c..4 * c].to_vec()))
    }
}

/// Floating-point work and compulsory memory traffic of one conv + BN pass, for the
/// examples' throughput figures.
#[derive(Clone, Copy, Debug)]
pub struct ConvBnCost {
    /// `2 n c_out h w c_in 9` (conv) + about 8 per output element (statistics, normalize).
    pub flops: f64,
    /// Fused: read x and w, write y, read y, write out (+ partials, negligible).
    pub fused_bytes: f64,
    /// Unfused: as fused, plus the statistics stage's second read of y.
    pub unfused_bytes: f64,
}

impl ConvBnCost {
    pub fn of(g: &ConvGeom) -> Self {
        let outputs = g.y_len() as f64;
        let flops = 2.0 * outputs * g.c_in as f64 * 9.0 + 8.0 * outputs;
        let fused = 4.0 * (g.x_len() as f64 + g.w_len() as f64 + 3.0 * outputs);
        Self { flops, fused_bytes: fused, unfused_bytes: fused + 4.0 * outputs }
    }
}
