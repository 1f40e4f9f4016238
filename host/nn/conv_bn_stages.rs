//! The unfused baselines of [`super::conv_bn`], CUDA only: the three stages (conv,
//! statistics, normalize) as three ordinary kernel launches from the same device
//! functions (`resident_device::nn::stages`), and those three launches captured once
//! into a CUDA Graph and replayed. They run on the runtime's module and buffers, on a
//! stream of their own; stop the persistent kernel first (`Runtime::close`), so that
//! nothing resident shares the SMs with them (as the benchmarks' baselines do).

use cudarc::driver::sys::{self, CUfunction};
use resident_device::nn::stages::ConvBnStageParams;
use std::ffi::c_void;
use std::sync::Arc;

use super::conv_bn::{ConvBn, NORM_CHUNK};
use crate::cuda::driver::check;
use crate::cuda::graph::CapturedGraph;
use crate::cuda::stream::Stream;
use crate::runtime::Shared;
use crate::{Error, Result, Runtime};

/// Threads per block of the stage kernels (each warp takes one work item at a time).
const BLOCK: u32 = 128;

/// The three stage kernels bound to one problem's buffers.
pub struct ConvBnStages {
    shared: Arc<Shared>,
    // Drop order: the stream after everything enqueued on it.
    stream: Stream,
    kernels: [(CUfunction, u32); 3],
    params: ConvBnStageParams,
}

// SAFETY: function handles are immutable driver objects usable from any thread.
unsafe impl Send for ConvBnStages {}

impl ConvBnStages {
    /// [`Error::NoDevice`] on the CPU backend.
    pub fn new(rt: &Runtime, cb: &ConvBn) -> Result<Self> {
        let shared = rt.shared().clone();
        let cuda = shared.backend.cuda().ok_or(Error::NoDevice)?;
        let g = cb.geom;
        let params = ConvBnStageParams {
            x: cb.x.addr(),
            w: cb.w.addr(),
            y: cb.y.addr(),
            partials: cb.partials.addr(),
            affine: cb.affine.addr(),
            out: cb.out.addr(),
            n: g.n,
            c_in: g.c_in,
            c_out: g.c_out,
            h: g.h,
            w_: g.w,
            eps: cb.eps,
            chunk: NORM_CHUNK,
            _pad: 0,
        };
        let warps = BLOCK / 32;
        let grid = |items: u32| items.div_ceil(warps).max(1);
        let kernels = [
            (cuda.function("resident_conv_stage")?, grid(g.tiles())),
            (cuda.function("resident_bn_stats_stage")?, grid(g.tiles())),
            (cuda.function("resident_bn_norm_stage")?, grid(params.norm_items(&g))),
        ];
        let stream = Stream::non_blocking(cuda.context(), 0)?;
        Ok(Self { shared, stream, kernels, params })
    }

    fn launch_all(&self) -> Result<()> {
        for (f, grid) in self.kernels {
            let mut p = self.params;
            let mut args = [&raw mut p as *mut c_void];
            check(
                unsafe { sys::cuLaunchKernel(f, grid, 1, 1, BLOCK, 1, 1, 0, self.stream.raw(), args.as_mut_ptr(), std::ptr::null_mut()) },
                "cuLaunchKernel(conv + BN stage)",
            )?;
        }
        Ok(())
    }

    /// One launch per stage, back to back on one stream, then a synchronize.
    pub fn run(&self) -> Result<()> {
        self.shared.bind()?;
        self.launch_all()?;
        self.stream.synchronize()
    }

    /// The three launches captured into a CUDA Graph, instantiated and uploaded.
    pub fn capture(&self) -> Result<StagesGraph<'_>> {
        self.shared.bind()?;
        Ok(StagesGraph { owner: self, inner: CapturedGraph::capture(&self.stream, || self.launch_all())? })
    }
}

impl Drop for ConvBnStages {
    fn drop(&mut self) {
        let _ = self.shared.bind();
        let _ = self.stream.synchronize();
    }
}

/// The three stage launches as one instantiated graph.
pub struct StagesGraph<'s> {
    owner: &'s ConvBnStages,
    inner: CapturedGraph,
}

impl StagesGraph<'_> {
    /// Replays the graph once and waits.
    pub fn replay(&self) -> Result<()> {
        self.inner.replay(&self.owner.stream)
    }
}
