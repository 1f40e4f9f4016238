//! Warp collectives for task code: a value of any `Pod` type of 4 or 8 bytes moves
//! between lanes as one or two 32-bit shuffles; reductions and scans take any
//! associative operation, and the numeric types have sums, maxima and minima ready
//! ([`WarpNum`]). Every lane must call each of them (warp-collective). On the CPU
//! backend a warp is one lane: a reduction or a scan returns the lane's own value.

use bytemuck::Pod;

use super::TaskCx;
use crate::arch;

/// Moves `v` (4 or 8 bytes) through `shfl`, one 32-bit word at a time.
#[inline(always)]
fn shuffle<T: Pod>(v: T, shfl: impl Fn(u32) -> u32) -> T {
    const { assert!(size_of::<T>() == 4 || size_of::<T>() == 8, "warp collectives move values of 4 or 8 bytes") };
    let n = size_of::<T>();
    let mut words = [0u32; 2];
    bytemuck::bytes_of_mut(&mut words)[..n].copy_from_slice(bytemuck::bytes_of(&v));
    words[0] = shfl(words[0]);
    if n == 8 {
        words[1] = shfl(words[1]);
    }
    bytemuck::pod_read_unaligned(&bytemuck::bytes_of(&words)[..n])
}

/// The numbers the warp's ready-made reductions take: sums (wrapping for integers),
/// maxima and minima (for floats as `f32::max` / `f32::min`: a NaN loses to a number).
pub trait WarpNum: Pod {
    /// `a + b` (wrapping for integers).
    fn sum(a: Self, b: Self) -> Self;
    /// The larger of the two.
    fn max(a: Self, b: Self) -> Self;
    /// The smaller of the two.
    fn min(a: Self, b: Self) -> Self;
}

macro_rules! warp_int {
    ($($t:ty),*) => {$(
        impl WarpNum for $t {
            #[inline(always)]
            fn sum(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self { Ord::max(a, b) }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self { Ord::min(a, b) }
        }
    )*};
}
warp_int!(u32, i32, u64, i64);

macro_rules! warp_float {
    ($($t:ty),*) => {$(
        impl WarpNum for $t {
            #[inline(always)]
            fn sum(a: Self, b: Self) -> Self { a + b }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self { <$t>::max(a, b) }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self { <$t>::min(a, b) }
        }
    )*};
}
warp_float!(f32, f64);

impl TaskCx {
    /// Lane `src`'s `v`, in every lane: any `Pod` of 4 or 8 bytes. Warp-collective.
    #[inline(always)]
    pub fn broadcast<T: Pod>(&self, v: T, src: u32) -> T {
        shuffle(v, |w| arch::shfl_idx(w, src))
    }

    /// `op` over every lane's `v`, in every lane (a butterfly). `op` must be
    /// associative and commutative; then every lane gets the same value, floats
    /// included (bit for bit, but for the sign of a zero from `max` or `min` of `+0`
    /// and `-0`). Any `Pod` of 4 or 8 bytes. Warp-collective.
    #[inline(always)]
    pub fn warp_reduce<T: Pod>(&self, v: T, op: impl Fn(T, T) -> T) -> T {
        let mut v = v;
        let mut step = arch::WARP / 2;
        while step > 0 {
            v = op(v, shuffle(v, |w| arch::shfl_xor(w, step)));
            step /= 2;
        }
        v
    }

    /// The sum of `v` over the warp's lanes, in every lane (wrapping for integers).
    /// Warp-collective.
    #[inline(always)]
    pub fn warp_sum<T: WarpNum>(&self, v: T) -> T {
        self.warp_reduce(v, T::sum)
    }

    /// The largest `v` of the warp's lanes, in every lane. Warp-collective.
    #[inline(always)]
    pub fn warp_max<T: WarpNum>(&self, v: T) -> T {
        self.warp_reduce(v, T::max)
    }

    /// The smallest `v` of the warp's lanes, in every lane. Warp-collective.
    #[inline(always)]
    pub fn warp_min<T: WarpNum>(&self, v: T) -> T {
        self.warp_reduce(v, T::min)
    }

    /// Inclusive scan: lane `i` gets `op` over lanes `0..=i`'s values, in lane order
    /// (`op` associative). Any `Pod` of 4 or 8 bytes. Warp-collective.
    #[inline(always)]
    pub fn warp_scan<T: Pod>(&self, v: T, op: impl Fn(T, T) -> T) -> T {
        let lane = arch::lane_id();
        let mut v = v;
        let mut d = 1;
        while d < arch::WARP {
            let below = shuffle(v, |w| arch::shfl_up(w, d));
            if lane >= d {
                v = op(below, v);
            }
            d *= 2;
        }
        v
    }

    /// Exclusive scan: lane `i` gets `op` over lanes `0..i`'s values, lane 0 gets
    /// `identity`. Warp-collective.
    #[inline(always)]
    pub fn warp_scan_exclusive<T: Pod>(&self, v: T, identity: T, op: impl Fn(T, T) -> T) -> T {
        let inclusive = self.warp_scan(v, op);
        let below = shuffle(inclusive, |w| arch::shfl_up(w, 1));
        if arch::lane_id() == 0 { identity } else { below }
    }
}
