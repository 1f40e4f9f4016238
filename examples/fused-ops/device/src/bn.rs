//! Training-mode batch normalization of one channel, after every conv tile is done:
//! merge the channel's per-tile moments (f64, Chan's pairwise update: stable, no
//! `E[x²] - E[x]²` cancellation, whatever the batch size) into the batch mean and
//! biased variance, then `out = max(0, y * scale + shift)` with
//! `scale = gamma / sqrt(var + eps)` and `shift = beta - mean * scale`, over a range of
//! images of that channel.

use crate::layout::{CONV_TILE_PX, ConvGeom};

use super::math::Moments64;
use resident_device::arch;

#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct F4([f32; 4]);

/// The batch mean and biased variance of channel `c`, in every lane.
///
/// # Safety
/// `partials` must hold the geometry's partials, complete.
#[inline(always)]
pub unsafe fn channel_stats(g: &ConvGeom, partials: *const f32, c: u32) -> (f64, f64) {
    let tpp = g.tiles_per_plane();
    let per_channel = g.n * tpp;
    let base = partials.wrapping_add(g.partial_at(c, 0, 0) as usize);
    let mut m = Moments64::EMPTY;
    let mut j = arch::lane_id();
    while j < per_channel {
        let count = g.tile_pixels(j % tpp).min(CONV_TILE_PX);
        let (mean, m2) = unsafe { (*base.add(2 * j as usize), *base.add(2 * j as usize + 1)) };
        m = m.merge(Moments64 { n: count as f64, mean: mean as f64, m2: m2 as f64 });
        j += arch::WARP;
    }
    let m = m.warp_merge();
    (m.mean, m.m2 / m.n)
}

/// Normalizes channel `c` of images `n0 .. n0 + count` from `y` into `out`; the call
/// with `n0 == 0` also stores the channel's batch mean and variance into `affine`
/// (`[gamma | beta | mean | var]`, `c_out` each). Every lane must call.
///
/// # Safety
/// The pointers must hold the geometry's buffers (`y_len`, `partials_len`,
/// `affine_len`); `c < c_out`, `n0 + count <= n`; the partials and `y` complete.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn normalize(
    g: &ConvGeom,
    y: *const f32,
    out: *mut f32,
    partials: *const f32,
    affine: *mut f32,
    c: u32,
    n0: u32,
    count: u32,
    eps: f32,
) {
    let (mean, var) = unsafe { channel_stats(g, partials, c) };
    let co = g.c_out as usize;
    let (gamma, beta) = unsafe { (*affine.add(c as usize) as f64, *affine.add(co + c as usize) as f64) };
    let scale = gamma / arch::sqrt_f64(var + eps as f64);
    let shift = (beta - mean * scale) as f32;
    let scale = scale as f32;
    let hw = g.hw() as usize;
    let lane = arch::lane_id() as usize;
    let step = arch::WARP as usize;
    for n in n0..n0 + count {
        let at = (n as usize * co + c as usize) * hw;
        let (src, dst) = (y.wrapping_add(at), out.wrapping_add(at));
        let mut done = 0;
        if hw.is_multiple_of(4) && (src as usize | dst as usize).is_multiple_of(16) {
            let (s4, d4) = (src as *const F4, dst as *mut F4);
            let mut i = lane;
            while i < hw / 4 {
                let mut v = unsafe { s4.add(i).read() };
                for e in v.0.iter_mut() {
                    *e = arch::fmaf(*e, scale, shift).max(0.0);
                }
                unsafe { d4.add(i).write(v) };
                i += step;
            }
            done = hw;
        }
        let mut i = done + lane;
        while i < hw {
            unsafe { *dst.add(i) = arch::fmaf(*src.add(i), scale, shift).max(0.0) };
            i += step;
        }
    }
    if n0 == 0 && arch::lane_id() == 0 {
        unsafe {
            *affine.add(2 * co + c as usize) = mean as f32;
            *affine.add(3 * co + c as usize) = var as f32;
        }
    }
}
