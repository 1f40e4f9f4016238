//! The unfused conv + batch-norm baseline as three ordinary kernels (one launch per
//! stage), built from the very functions the fused tasks run: conv tiles without their
//! statistics epilogue, then the statistics read back from `y` per tile, then the
//! normalize step per (channel, image chunk). Each kernel gives work items to warps
//! grid-stride, one item per warp at a time, like the queue gives tasks.

use crate::layout::ConvGeom;
use bytemuck::{Pod, Zeroable};

use super::{bn, conv};

/// The stage kernels' one by-value argument (device addresses).
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
pub struct ConvBnStageParams {
    pub x: u64,
    pub w: u64,
    pub y: u64,
    pub partials: u64,
    pub affine: u64,
    pub out: u64,
    pub n: u32,
    pub c_in: u32,
    pub c_out: u32,
    pub h: u32,
    pub w_: u32,
    pub eps: f32,
    /// Images per normalize item.
    pub chunk: u32,
    pub _pad: u32,
}
const _: () = assert!(core::mem::size_of::<ConvBnStageParams>() == 80);

impl ConvBnStageParams {
    pub fn geom(&self) -> Option<ConvGeom> {
        ConvGeom::checked(self.n, self.c_in, self.c_out, self.h, self.w_)
    }
    /// Normalize items: (channel, chunk of images).
    pub fn norm_items(&self, g: &ConvGeom) -> u32 {
        g.c_out * g.n.div_ceil(self.chunk.max(1))
    }
}

/// Stage 1: conv tiles `warp, warp + warps, ..` (no statistics).
///
/// # Safety
/// The addresses must hold the geometry's buffers; every lane of the warp calls.
#[inline(always)]
pub unsafe fn conv(p: &ConvBnStageParams, warp: u32, warps: u32) {
    let Some(g) = p.geom() else { return };
    let mut t = warp;
    while t < g.tiles() {
        unsafe { conv::conv_tile(&g, p.x as *const f32, p.w as *const f32, p.y as *mut f32, core::ptr::null_mut(), t) };
        t += warps;
    }
}

/// Stage 2: per-tile statistics of `y`.
///
/// # Safety
/// As for [`conv`], after it.
#[inline(always)]
pub unsafe fn stats(p: &ConvBnStageParams, warp: u32, warps: u32) {
    let Some(g) = p.geom() else { return };
    let mut t = warp;
    while t < g.tiles() {
        unsafe { conv::stats_tile(&g, p.y as *const f32, p.partials as *mut f32, t) };
        t += warps;
    }
}

/// Stage 3: normalize, per (channel, chunk of images).
///
/// # Safety
/// As for [`conv`], after [`stats`].
#[inline(always)]
pub unsafe fn normalize(p: &ConvBnStageParams, warp: u32, warps: u32) {
    let Some(g) = p.geom() else { return };
    let chunk = p.chunk.max(1);
    let chunks = g.n.div_ceil(chunk);
    let mut i = warp;
    while i < p.norm_items(&g) {
        let (c, k) = (i / chunks, i % chunks);
        let n0 = k * chunk;
        let count = chunk.min(g.n - n0);
        unsafe {
            bn::normalize(&g, p.y as *const f32, p.out as *mut f32, p.partials as *const f32, p.affine as *mut f32, c, n0, count, p.eps)
        };
        i += warps;
    }
}

/// Stage 1 as a kernel (`resident_conv_stage`): any grid.
pub struct ConvStage;
/// Stage 2 as a kernel (`resident_bn_stats_stage`): any grid.
pub struct StatsStage;
/// Stage 3 as a kernel (`resident_bn_norm_stage`): any grid.
pub struct NormStage;

impl resident_device::DeviceKernel for ConvStage {
    type Params = ConvBnStageParams;
    #[inline(always)]
    unsafe fn run(p: &ConvBnStageParams) {
        unsafe { conv(p, resident_device::arch::global_warp_id(), resident_device::arch::global_warp_count()) }
    }
}
impl resident_device::DeviceKernel for StatsStage {
    type Params = ConvBnStageParams;
    #[inline(always)]
    unsafe fn run(p: &ConvBnStageParams) {
        unsafe { stats(p, resident_device::arch::global_warp_id(), resident_device::arch::global_warp_count()) }
    }
}
impl resident_device::DeviceKernel for NormStage {
    type Params = ConvBnStageParams;
    #[inline(always)]
    unsafe fn run(p: &ConvBnStageParams) {
        unsafe { normalize(p, resident_device::arch::global_warp_id(), resident_device::arch::global_warp_count()) }
    }
}
