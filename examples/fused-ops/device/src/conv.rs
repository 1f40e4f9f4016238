//! A conv tile: 3×3 convolution (stride 1, zero padding 1), fp32, NCHW, of one image,
//! one group of [`COB`] output channels and [`TILE_PX`] consecutive output pixels of the
//! plane; with, in the fused version, this tile's per-channel moments (mean and `m2`)
//! computed from the accumulators still in registers and stored in the partials buffer.
//!
//! Work split: the tile has 32 virtual lanes (the CPU backend's one-lane warp loops over
//! them); virtual lane `l` owns pixels `p0 + l + 32k`, `k < PX`, so that each pixel
//! load and each output store is coalesced across the warp. Per input channel and
//! kernel tap, a lane loads its `PX` input pixels and the tap's `COB` weights (one
//! warp-uniform 32-byte vector: the packed layout puts them together) and does
//! `PX × COB` fused multiply-adds into its accumulators.

use crate::layout::{CONV_COB, CONV_LANES, CONV_PX, CONV_TILE_PX, ConvGeom};

use super::math::Moments;
use resident_device::arch;

const COB: usize = CONV_COB as usize;
const PX: usize = CONV_PX as usize;
pub const TILE_PX: u32 = CONV_TILE_PX;

#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct F4([f32; 4]);

/// The pixels virtual lane `vl` owns in tile `p` of a plane, and for each, which of the
/// nine taps read inside the image (bit `3 * ky + kx`); 0 for pixels past the plane.
#[inline(always)]
fn lane_pixels(g: &ConvGeom, p: u32, vl: u32) -> ([u32; PX], [u32; PX]) {
    let mut pix = [0u32; PX];
    let mut taps = [0u32; PX];
    for k in 0..PX {
        let q = p * TILE_PX + vl + CONV_LANES * k as u32;
        pix[k] = q;
        if q < g.hw() {
            let (oy, ox) = (q / g.w, q % g.w);
            let mut m = 0;
            for t in 0..9u32 {
                let (iy, ix) = (oy as i32 + (t / 3) as i32 - 1, ox as i32 + (t % 3) as i32 - 1);
                if iy >= 0 && iy < g.h as i32 && ix >= 0 && ix < g.w as i32 {
                    m |= 1 << t;
                }
            }
            taps[k] = m;
        }
    }
    (pix, taps)
}

/// Number of the lane's pixels inside the plane (they come first: pixels grow with k).
#[inline(always)]
fn valid_count(g: &ConvGeom, pix: &[u32; PX]) -> usize {
    pix.iter().filter(|&&q| q < g.hw()).count()
}

/// The accumulators of virtual lane `vl`: `acc[k][c]` for its pixel `k` and output
/// channel `cog * COB + c`.
///
/// # Safety
/// `x` and `wp` must hold the geometry's input and packed weights.
#[inline(always)]
unsafe fn accumulate(g: &ConvGeom, x: *const f32, wp: *const f32, n: u32, cog: u32, pix: &[u32; PX], taps: &[u32; PX]) -> [[f32; COB]; PX] {
    let mut acc = [[0f32; COB]; PX];
    let hw = g.hw() as usize;
    let w = g.w as isize;
    let xn = x.wrapping_add(n as usize * g.c_in as usize * hw);
    let wg = wp.wrapping_add(cog as usize * g.c_in as usize * 9 * COB) as *const F4;
    // Taps outside, input channels inside: per tap, each pixel's address and in-image
    // bit stay in registers across the channel loop, and the loop body is small (two
    // weight vectors, PX pixels, PX × COB FMAs), which keeps the register count low
    // (the compiler does not hoist the loads of all nine taps).
    for t in 0..9usize {
        let shift = ((t / 3) as isize - 1) * w + (t % 3) as isize - 1;
        let src: [*const f32; PX] = core::array::from_fn(|k| xn.wrapping_offset(pix[k] as isize + shift));
        let inside: [bool; PX] = core::array::from_fn(|k| taps[k] >> t & 1 != 0);
        let mut wc = wg.wrapping_add(2 * t);
        let mut off = 0usize;
        for _ in 0..g.c_in {
            // Warp-uniform: every lane reads the same 32 bytes (one broadcast).
            let (w0, w1) = unsafe { (wc.read(), wc.add(1).read()) };
            let wv = [w0.0[0], w0.0[1], w0.0[2], w0.0[3], w1.0[0], w1.0[1], w1.0[2], w1.0[3]];
            for k in 0..PX {
                // In the image: the tap bit says so.
                let v = if inside[k] { unsafe { *src[k].add(off) } } else { 0.0 };
                for c in 0..COB {
                    acc[k][c] = arch::fmaf(v, wv[c], acc[k][c]);
                }
            }
            wc = wc.wrapping_add(9 * COB / 4);
            off += hw;
        }
    }
    acc
}

/// Merges each channel's per-lane moments over the warp; lane 0 stores tile `(n, p)`'s
/// `(mean, m2)` for channels `cog * COB ..`.
///
/// # Safety
/// `partials` must hold [`ConvGeom::partials_len`] floats.
#[inline(always)]
unsafe fn store_moments(g: &ConvGeom, partials: *mut f32, n: u32, cog: u32, p: u32, mom: &[Moments; COB]) {
    for (c, m) in mom.iter().enumerate() {
        let m = m.warp_merge();
        if arch::lane_id() == 0 {
            let at = g.partial_at(cog * CONV_COB + c as u32, n, p) as usize;
            // Weak stores: published by the task's completion (bar.warp.sync, then the
            // signal's release add), which the normalize tasks acquire.
            unsafe {
                *partials.add(at) = m.mean;
                *partials.add(at + 1) = m.m2;
            }
        }
    }
}

/// One virtual lane's share of conv tile `(n, cog, p)`: its accumulators stored to
/// `y`, and, if `stats`, their moments per channel.
///
/// # Safety
/// As for [`conv_tile`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn lane_pass(
    g: &ConvGeom,
    x: *const f32,
    wp: *const f32,
    yg: *mut f32,
    n: u32,
    cog: u32,
    p: u32,
    vl: u32,
    stats: bool,
) -> [Moments; COB] {
    let (pix, taps) = lane_pixels(g, p, vl);
    let acc = unsafe { accumulate(g, x, wp, n, cog, &pix, &taps) };
    let valid = valid_count(g, &pix);
    let hw = g.hw() as usize;
    for (k, a) in acc.iter().enumerate().take(valid) {
        for (c, v) in a.iter().enumerate() {
            unsafe { *yg.add(c * hw + pix[k] as usize) = *v };
        }
    }
    let mut mom = [Moments::EMPTY; COB];
    if stats {
        for c in 0..COB {
            let v: [f32; PX] = core::array::from_fn(|k| acc[k][c]);
            mom[c] = Moments::of(&v, valid);
        }
    }
    mom
}

/// Computes conv tile `tile` into `y`; if `partials` is not null, also its moments
/// (the fused path). Every lane of the warp must call.
///
/// # Safety
/// The pointers must hold the geometry's buffers (`x_len`, `w_len`, `y_len`,
/// `partials_len` floats), `wp` 16-byte aligned; `tile < g.tiles()`; no one else writes
/// the tile's outputs meanwhile.
#[inline(always)]
pub unsafe fn conv_tile(g: &ConvGeom, x: *const f32, wp: *const f32, y: *mut f32, partials: *mut f32, tile: u32) {
    let (n, cog, p) = g.tile(tile);
    let hw = g.hw() as usize;
    let yg = y.wrapping_add((n as usize * g.c_out as usize + (cog * CONV_COB) as usize) * hw);
    let stats = !partials.is_null();
    let lane = arch::lane_id();
    let mut mom = unsafe { lane_pass(g, x, wp, yg, n, cog, p, lane, stats) };
    // A warp narrower than the tile (the CPU backend's one lane) covers the other
    // virtual lanes in turn; on the GPU (32 lanes) this loop is compiled away, so no
    // moments stay live across the accumulation.
    if arch::WARP < CONV_LANES {
        let mut vl = lane + arch::WARP;
        while vl < CONV_LANES {
            let m = unsafe { lane_pass(g, x, wp, yg, n, cog, p, vl, stats) };
            for (acc, m) in mom.iter_mut().zip(m) {
                *acc = acc.merge(m);
            }
            vl += arch::WARP;
        }
    }
    if stats {
        unsafe { store_moments(g, partials, n, cog, p, &mom) };
    }
}

/// The unfused statistics stage: the moments of conv tile `tile`, read back from `y`
/// (same pixels, same order of merging as [`conv_tile`]'s fused epilogue).
///
/// # Safety
/// As for [`conv_tile`], with `y` complete.
#[inline(always)]
pub unsafe fn stats_tile(g: &ConvGeom, y: *const f32, partials: *mut f32, tile: u32) {
    let (n, cog, p) = g.tile(tile);
    let hw = g.hw() as usize;
    let yg = y.wrapping_add((n as usize * g.c_out as usize + (cog * CONV_COB) as usize) * hw);
    let mut mom = [Moments::EMPTY; COB];
    let mut vl = arch::lane_id();
    while vl < CONV_LANES {
        let (pix, _) = lane_pixels(g, p, vl);
        let valid = valid_count(g, &pix);
        for (c, m) in mom.iter_mut().enumerate() {
            let v: [f32; PX] = core::array::from_fn(|k| if k < valid { unsafe { *yg.add(c * hw + pix[k] as usize) } } else { 0.0 });
            *m = m.merge(Moments::of(&v, valid));
        }
        vl += arch::WARP;
    }
    unsafe { store_moments(g, partials, n, cog, p, &mom) };
}
