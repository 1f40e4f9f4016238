//! The persistent RNN (`h_t = tanh(W_hh h_{t-1} + W_ih x_t + b)`, fp32): one launch
//! steps through the whole sequence, each block keeping its rows of the weights in
//! shared memory, the blocks meeting at a device-side grid barrier between steps; the
//! inputs may arrive from the host while it runs. Baselines: one launch per time step
//! that reads the weights from global memory, and those launches replayed from a CUDA
//! Graph. The device code and every ordering are in `resident_device::nn::rnn`;
//! docs/examples.md says why this is a kernel of its own rather than queue tasks.
//!
//! On the CPU backend the same device functions run on threads: one per "block" (a
//! block of one thread) plus one for the feeder.
//!
//! ```
//! use fused_ops::rnn::{Feed, Rnn, RnnShape, RnnWeights};
//! use resident::BackendKind;
//! let shape = RnnShape { hidden: 16, input: 8, batch: 2, steps: 5 };
//! let w = RnnWeights { w_hh: vec![0.01; 256], w_ih: vec![0.02; 128], bias: vec![0.1; 16] };
//! let mut rnn = Rnn::new(BackendKind::Cpu, shape, &w)?;
//! let run = rnn.persistent(&vec![0.0; 32], &vec![0.5; 80], Feed::HostLive)?;
//! assert_eq!(run.out.len(), 5 * 2 * 16);
//! # Ok::<(), resident::Error>(())
//! ```

mod cpu;
mod cuda;

pub use fused_ops_device::rnn::MAX_BATCH;

use std::time::Duration;

use resident::{BackendKind, Error, Result};

/// Sizes of one RNN run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RnnShape {
    /// Hidden size (a multiple of 4).
    pub hidden: u32,
    /// Input size (a multiple of 4).
    pub input: u32,
    /// Sequences stepped together, 1 to [`MAX_BATCH`].
    pub batch: u32,
    pub steps: u32,
}

impl RnnShape {
    fn check(&self) -> Result<()> {
        let ok = self.hidden > 0
            && self.input > 0
            && self.hidden.is_multiple_of(4)
            && self.input.is_multiple_of(4)
            && (1..=MAX_BATCH).contains(&self.batch)
            && self.steps > 0
            && (self.steps as u64 * self.batch as u64 * self.hidden.max(self.input) as u64) < (1 << 32);
        if ok {
            Ok(())
        } else {
            Err(Error::Config(format!("RNN shape {self:?}: sizes multiples of 4, batch 1..={MAX_BATCH}, outputs below 2^32 floats")))
        }
    }
    pub fn h_len(&self) -> usize {
        (self.batch * self.hidden) as usize
    }
    pub fn xs_len(&self) -> usize {
        self.steps as usize * (self.batch * self.input) as usize
    }
    pub fn out_len(&self) -> usize {
        self.steps as usize * self.h_len()
    }
}

/// Row-major weights: `w_hh` is `hidden × hidden`, `w_ih` is `hidden × input`.
#[derive(Clone, Debug)]
pub struct RnnWeights {
    pub w_hh: Vec<f32>,
    pub w_ih: Vec<f32>,
    pub bias: Vec<f32>,
}

/// Where the persistent kernel's inputs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feed {
    /// Already in device memory (copied before the launch), as for the baselines.
    Device,
    /// Written by the host into mapped pinned memory before the launch; the feeder
    /// copies them into device memory while the RNN runs.
    HostAhead,
    /// Written by the host step by step while the RNN runs (each step published with a
    /// release store of the ready count): the time includes the host's writes.
    HostLive,
}

/// The outputs of a run (`steps × batch × hidden`: `h_t` for every step) and its time
/// (wall clock from the first launch to the end of the last, inputs' upload excluded
/// except for [`Feed::HostLive`]).
#[derive(Clone, Debug)]
pub struct RnnRun {
    pub out: Vec<f32>,
    pub elapsed: Duration,
}

/// An RNN's weights on a backend, with the persistent kernel and the baselines.
pub struct Rnn {
    shape: RnnShape,
    inner: Inner,
}

enum Inner {
    Cuda(Box<cuda::CudaRnn>),
    Cpu(cpu::CpuRnn),
}

impl Rnn {
    /// Uploads the weights. `BackendKind::Auto` picks CUDA when it is available.
    pub fn new(kind: BackendKind, shape: RnnShape, w: &RnnWeights) -> Result<Self> {
        shape.check()?;
        let (h, i) = (shape.hidden as usize, shape.input as usize);
        for (got, want) in [(w.w_hh.len(), h * h), (w.w_ih.len(), h * i), (w.bias.len(), h)] {
            if got != want {
                return Err(Error::LengthMismatch { expected: want, got });
            }
        }
        let cuda = match kind {
            BackendKind::Auto => crate::cuda_available(),
            k => k == BackendKind::Cuda,
        };
        let inner = if cuda { Inner::Cuda(Box::new(cuda::CudaRnn::new(shape, w)?)) } else { Inner::Cpu(cpu::CpuRnn::new(shape, w)) };
        Ok(Self { shape, inner })
    }

    pub fn shape(&self) -> RnnShape {
        self.shape
    }

    /// Multiplies every time bound of the CUDA runs (the device's bound on each wait,
    /// the host's on a run) by `k`: for runs under compute-sanitizer. The CPU backend
    /// has no such bound to scale.
    pub fn set_time_scale(&mut self, k: u32) {
        if let Inner::Cuda(c) = &mut self.inner {
            c.set_time_scale(k);
        }
    }

    pub fn is_cuda(&self) -> bool {
        matches!(self.inner, Inner::Cuda(_))
    }

    /// The layout, in words.
    pub fn describe(&self) -> String {
        match &self.inner {
            Inner::Cuda(c) => c.describe(),
            Inner::Cpu(c) => c.describe(),
        }
    }

    fn check_inputs(&self, h0: &[f32], xs: &[f32]) -> Result<()> {
        if h0.len() != self.shape.h_len() {
            return Err(Error::LengthMismatch { expected: self.shape.h_len(), got: h0.len() });
        }
        if xs.len() != self.shape.xs_len() {
            return Err(Error::LengthMismatch { expected: self.shape.xs_len(), got: xs.len() });
        }
        Ok(())
    }

    /// The whole sequence in one launch of the persistent kernel.
    pub fn persistent(&mut self, h0: &[f32], xs: &[f32], feed: Feed) -> Result<RnnRun> {
        self.check_inputs(h0, xs)?;
        match &mut self.inner {
            Inner::Cuda(c) => c.persistent(h0, xs, feed),
            Inner::Cpu(c) => c.persistent(h0, xs, feed),
        }
    }

    /// The baseline: one launch per time step (on the CPU backend, the same step
    /// function called block by block).
    pub fn per_step(&mut self, h0: &[f32], xs: &[f32]) -> Result<RnnRun> {
        self.check_inputs(h0, xs)?;
        match &mut self.inner {
            Inner::Cuda(c) => c.per_step(h0, xs),
            Inner::Cpu(c) => Ok(c.per_step(h0, xs)),
        }
    }

    /// The per-step launches captured once into a CUDA Graph (on the first call) and
    /// replayed. [`Error::NoDevice`] on the CPU backend.
    pub fn per_step_graph(&mut self, h0: &[f32], xs: &[f32]) -> Result<RnnRun> {
        self.check_inputs(h0, xs)?;
        match &mut self.inner {
            Inner::Cuda(c) => c.per_step_graph(h0, xs),
            Inner::Cpu(_) => Err(Error::NoDevice),
        }
    }
}
