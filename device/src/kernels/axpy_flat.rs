//! `resident_axpy_flat`: the axpy task's own vector loop (`builtin::axpy`) over many
//! slices in one ordinary launch, one warp per slice: no queue, no claim, no completion.
//! The dispatch benchmark's ceiling for its axpy tasks: what the same task code reaches
//! when dispatch costs nothing (benches/dispatch.rs).

use bytemuck::{Pod, Zeroable};

/// The kernel's one by-value argument.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct AxpyFlatParams {
    /// Device addresses of `slices * slice` `f32`s each; `y = alpha * x + y`.
    pub x: u64,
    /// See `x`: read and written in place.
    pub y: u64,
    /// Number of slices: one warp each (warps past it do nothing).
    pub slices: u32,
    /// Floats per slice (per warp).
    pub slice: u32,
    /// The scale of `x`.
    pub alpha: f32,
    /// Fills the struct to 32 bytes; unused.
    pub _pad: u32,
}

const _: () = assert!(core::mem::size_of::<AxpyFlatParams>() == 32);

/// The body for warp `warp` of the grid (every lane calls).
///
/// # Safety
/// `p.x` and `p.y` must address `p.slices * p.slice` valid `f32`s each, 16-byte aligned
/// for the vector path (any alignment is correct, only slower).
#[inline(always)]
pub unsafe fn run(p: &AxpyFlatParams, warp: u32) {
    if warp >= p.slices {
        return;
    }
    let off = warp as usize * p.slice as usize;
    unsafe { crate::builtin::axpy::axpy(p.alpha, (p.x as *const f32).add(off), (p.y as *mut f32).add(off), p.slice as usize) };
}

/// The kernel (`resident_axpy_flat` in the runtime's image): one warp per slice.
pub struct AxpyFlat;

impl crate::DeviceKernel for AxpyFlat {
    type Params = AxpyFlatParams;
    #[inline(always)]
    unsafe fn run(p: &AxpyFlatParams) {
        unsafe { run(p, crate::arch::global_warp_id()) }
    }
}
