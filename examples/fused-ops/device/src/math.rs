//! Arithmetic shared by the example tasks and kernels, identical on both targets (no
//! `libm` on nvptx): warp sums, mergeable moments (mean and sum of squared deviations,
//! Chan et al.'s pairwise update), and `tanh` from a range-reduced `exp`.

use resident_device::arch;

/// Sum over the warp's lanes; every lane gets the total (butterfly). On the CPU backend
/// a warp has one lane: the identity.
#[inline(always)]
pub fn warp_sum(v: f32) -> f32 {
    let mut v = v;
    let mut off = arch::WARP / 2;
    while off > 0 {
        v += f32::from_bits(arch::shfl_xor(v.to_bits(), off));
        off /= 2;
    }
    v
}

/// Wrapping sum over the warp's lanes; every lane gets the total.
#[inline(always)]
pub fn warp_sum_u32(v: u32) -> u32 {
    let mut v = v;
    let mut off = arch::WARP / 2;
    while off > 0 {
        v = v.wrapping_add(arch::shfl_xor(v, off));
        off /= 2;
    }
    v
}

/// Count, mean and sum of squared deviations from the mean (`m2`) of a set of values,
/// in f32. Merging two sets is exact in exact arithmetic and stable in floating point
/// (no `sum of squares - square of sum` cancellation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments {
    pub n: f32,
    pub mean: f32,
    pub m2: f32,
}

impl Moments {
    pub const EMPTY: Self = Self { n: 0.0, mean: 0.0, m2: 0.0 };

    /// The moments of `count` values given as the first `count` of `v` (two passes over
    /// registers: mean, then squared deviations).
    #[inline(always)]
    pub fn of<const K: usize>(v: &[f32; K], count: usize) -> Self {
        if count == 0 {
            return Self::EMPTY;
        }
        let mut s = 0.0;
        for (k, x) in v.iter().enumerate() {
            if k < count {
                s += *x;
            }
        }
        let mean = s / count as f32;
        let mut m2 = 0.0;
        for (k, x) in v.iter().enumerate() {
            if k < count {
                let d = *x - mean;
                m2 = arch::fmaf(d, d, m2);
            }
        }
        Self { n: count as f32, mean, m2 }
    }

    #[inline(always)]
    pub fn merge(self, o: Self) -> Self {
        if o.n == 0.0 {
            return self;
        }
        if self.n == 0.0 {
            return o;
        }
        let n = self.n + o.n;
        let d = o.mean - self.mean;
        let f = o.n / n;
        Self { n, mean: arch::fmaf(d, f, self.mean), m2: self.m2 + o.m2 + d * d * self.n * f }
    }

    /// Merged over the warp's lanes; every lane gets the result.
    #[inline(always)]
    pub fn warp_merge(self) -> Self {
        let mut m = self;
        let mut off = arch::WARP / 2;
        while off > 0 {
            let o = Self {
                n: f32::from_bits(arch::shfl_xor(m.n.to_bits(), off)),
                mean: f32::from_bits(arch::shfl_xor(m.mean.to_bits(), off)),
                m2: f32::from_bits(arch::shfl_xor(m.m2.to_bits(), off)),
            };
            // Both lanes of a pair merge in the same order (lower lane first), so every
            // lane ends with bit-identical results.
            m = if arch::lane_id() & off == 0 { m.merge(o) } else { o.merge(m) };
            off /= 2;
        }
        m
    }
}

/// [`Moments`] in f64: for merging many partial results (a batch-norm channel merges
/// one per conv tile).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments64 {
    pub n: f64,
    pub mean: f64,
    pub m2: f64,
}

#[inline(always)]
fn shfl_xor_f64(v: f64, off: u32) -> f64 {
    let b = v.to_bits();
    let lo = arch::shfl_xor(b as u32, off) as u64;
    let hi = arch::shfl_xor((b >> 32) as u32, off) as u64;
    f64::from_bits(lo | hi << 32)
}

impl Moments64 {
    pub const EMPTY: Self = Self { n: 0.0, mean: 0.0, m2: 0.0 };

    #[inline(always)]
    pub fn merge(self, o: Self) -> Self {
        if o.n == 0.0 {
            return self;
        }
        if self.n == 0.0 {
            return o;
        }
        let n = self.n + o.n;
        let d = o.mean - self.mean;
        let f = o.n / n;
        Self { n, mean: self.mean + d * f, m2: self.m2 + o.m2 + d * d * self.n * f }
    }

    /// Merged over the warp's lanes; every lane gets the result.
    #[inline(always)]
    pub fn warp_merge(self) -> Self {
        let mut m = self;
        let mut off = arch::WARP / 2;
        while off > 0 {
            let o = Self { n: shfl_xor_f64(m.n, off), mean: shfl_xor_f64(m.mean, off), m2: shfl_xor_f64(m.m2, off) };
            m = if arch::lane_id() & off == 0 { m.merge(o) } else { o.merge(m) };
            off /= 2;
        }
        m
    }
}

/// `e^x` in f32 for the RNN's `tanh`: `x = n ln 2 + f` with `|f| <= ln 2 / 2` (Cody and
/// Waite's two-constant reduction), `e^f` by its Taylor polynomial to degree 7 (relative
/// error below 1e-8 on that range), `2^n` through the exponent bits.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = core::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let x = x.clamp(-87.0, 88.0);
    let t = x * LOG2E;
    let n = (t + if t >= 0.0 { 0.5 } else { -0.5 }) as i32;
    let nf = n as f32;
    let f = x - nf * LN2_HI - nf * LN2_LO;
    let mut p = 1.0 / 5040.0;
    p = arch::fmaf(p, f, 1.0 / 720.0);
    p = arch::fmaf(p, f, 1.0 / 120.0);
    p = arch::fmaf(p, f, 1.0 / 24.0);
    p = arch::fmaf(p, f, 1.0 / 6.0);
    p = arch::fmaf(p, f, 0.5);
    p = arch::fmaf(p, f, 1.0);
    p = arch::fmaf(p, f, 1.0);
    // n is in [-126, 127] after the clamp: a normal scale factor.
    p * f32::from_bits(((n + 127) as u32) << 23)
}

/// `tanh(x)` in f32: an odd Taylor polynomial below 0.125 (where `1 - 2/(e^2x + 1)`
/// would cancel), else `1 - 2 / (e^(2|x|) + 1)` with the sign restored. Within a few
/// ulp of the true value; the RNN example checks it against f64 `tanh`.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let a = if x < 0.0 { -x } else { x };
    if a < 0.125 {
        let x2 = x * x;
        // x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835
        let mut p = 62.0 / 2835.0;
        p = arch::fmaf(p, x2, -17.0 / 315.0);
        p = arch::fmaf(p, x2, 2.0 / 15.0);
        p = arch::fmaf(p, x2, -1.0 / 3.0);
        return arch::fmaf(p * x2, x, x);
    }
    let r = 1.0 - 2.0 / (exp_f32(2.0 * a) + 1.0);
    if x < 0.0 { -r } else { r }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_tanh_match_std() {
        let mut worst_exp = 0f64;
        let mut worst_tanh = 0f64;
        let mut x = -20.0f32;
        while x < 20.0 {
            let e = (x as f64).exp();
            worst_exp = worst_exp.max(((exp_f32(x) as f64) - e).abs() / e);
            let t = (x as f64).tanh();
            worst_tanh = worst_tanh.max(((tanh_f32(x) as f64) - t).abs() / t.abs().max(1e-30));
            x += 0.001_3;
        }
        assert!(worst_exp < 1e-6, "exp relative error {worst_exp}");
        assert!(worst_tanh < 2e-6, "tanh relative error {worst_tanh}");
        assert_eq!(tanh_f32(0.0), 0.0);
        assert_eq!(tanh_f32(100.0), 1.0);
        assert_eq!(tanh_f32(-100.0), -1.0);
    }

    #[test]
    fn moments_merge_matches_two_pass() {
        let v: [f32; 8] = [1.0, 2.5, -3.0, 4.0, 1e3, 1e3 + 1.0, 7.0, -0.5];
        let whole = Moments::of(&v, 8);
        let a = Moments::of(&[v[0], v[1], v[2]], 3);
        let b = Moments::of(&[v[3], v[4], v[5], v[6], v[7]], 5);
        let m = a.merge(b);
        assert!((m.mean - whole.mean).abs() < 1e-3 && (m.m2 - whole.m2).abs() / whole.m2 < 1e-5, "{m:?} vs {whole:?}");
        assert_eq!(Moments::EMPTY.merge(a), a);
        assert_eq!(a.merge(Moments::EMPTY), a);
    }
}
