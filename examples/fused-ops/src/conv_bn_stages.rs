//! The unfused baselines of [`super::conv_bn`]: the three stages (conv, statistics,
//! normalize) as three ordinary kernel launches from the same device functions
//! (`fused_ops_device::stages`), and those three launches captured once into a CUDA
//! Graph and replayed. Their kernels are the `conv_bn` image's ([`crate::conv_bn_image`]),
//! loaded on the runtime's device (`Runtime::device`); they run on the runtime's buffers, on
//! a stream of their own, launched with the typed launch API; stop the
//! persistent kernel first (`Runtime::close`), so that nothing resident shares the SMs
//! with them.

use fused_ops_device::stages::ConvBnStageParams;
use resident::stream::{Function, Graph, LaunchConfig, Stream};
use resident::{Result, Runtime};

use super::conv_bn::{ConvBn, NORM_CHUNK};

/// Threads per block of the stage kernels (each warp takes one work item at a time).
const BLOCK: u32 = 128;

/// The three stage kernels bound to one problem's buffers (borrowed: they outlive
/// every launch).
pub struct ConvBnStages<'a> {
    _problem: &'a ConvBn,
    kernels: [(Function<ConvBnStageParams>, u32); 3],
    params: ConvBnStageParams,
    stream: Stream,
}

impl<'a> ConvBnStages<'a> {
    /// The stages of `cb`'s problem on `rt`'s device (the GPU, or on a CPU runtime the
    /// CPU device, where the kernels run compiled for the host).
    pub fn new(rt: &Runtime, cb: &'a ConvBn) -> Result<Self> {
        let gpu = rt.device()?;
        let module = gpu.load(&crate::conv_bn_image())?;
        let g = cb.geom;
        let params = ConvBnStageParams {
            x: cb.x.raw_address(),
            w: cb.w.raw_address(),
            y: cb.y.raw_address(),
            partials: cb.partials.raw_address(),
            affine: cb.affine.raw_address(),
            out: cb.out.raw_address(),
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
            (module.function::<ConvBnStageParams>("conv_stage")?, grid(g.tiles())),
            (module.function::<ConvBnStageParams>("bn_stats_stage")?, grid(g.tiles())),
            (module.function::<ConvBnStageParams>("bn_norm_stage")?, grid(params.norm_items(&g))),
        ];
        Ok(Self { _problem: cb, kernels, params, stream: gpu.stream()? })
    }

    fn launch_all(&self, stream: &Stream) -> Result<()> {
        for (f, grid) in &self.kernels {
            // SAFETY: the addresses are the problem's buffers, each of the length the
            // shape implies (`ConvBn::new`), borrowed by `self` (so alive until the
            // launches are synchronized: `run`, `replay`); the stages touch only those.
            unsafe { stream.launch(f, LaunchConfig::new(*grid, BLOCK), self.params) }?;
        }
        Ok(())
    }

    /// One launch per stage, back to back on one stream, then a synchronize.
    pub fn run(&self) -> Result<()> {
        self.launch_all(&self.stream)?;
        self.stream.synchronize()
    }

    /// The three launches captured into a CUDA Graph.
    pub fn capture(&self) -> Result<StagesGraph<'_, 'a>> {
        Ok(StagesGraph { owner: self, graph: self.stream.capture(|s| self.launch_all(s))? })
    }
}

/// The three stage launches as one instantiated graph.
pub struct StagesGraph<'s, 'a> {
    owner: &'s ConvBnStages<'a>,
    graph: Graph,
}

impl StagesGraph<'_, '_> {
    /// Replays the graph once and waits.
    pub fn replay(&self) -> Result<()> {
        self.graph.launch(&self.owner.stream)?;
        self.owner.stream.synchronize()
    }
}
