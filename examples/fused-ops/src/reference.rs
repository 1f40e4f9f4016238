//! f64 references for the examples and tests: conv + batch norm, the RNN recurrence,
//! and the record pipeline, written independently of the device code (plain loops,
//! `str::parse`), so that a shared mistake does not check itself.

use fused_ops_device::layout::ConvGeom;

use super::conv_bn::ConvBnInputs;

/// The 3×3 conv (zero padding 1) of output channel `co` of image `n`, every pixel, in
/// f64; also `sum |x w|` per pixel, the scale of its rounding error.
pub fn conv_plane(inp: &ConvBnInputs, n: usize, co: usize) -> (Vec<f64>, Vec<f64>) {
    let g = inp.geom;
    let (h, w, ci_n) = (g.h as usize, g.w as usize, g.c_in as usize);
    let mut out = vec![0f64; h * w];
    let mut mag = vec![0f64; h * w];
    for ci in 0..ci_n {
        let xp = &inp.x[(n * ci_n + ci) * h * w..][..h * w];
        let wk = &inp.w[(co * ci_n + ci) * 9..][..9];
        for oy in 0..h {
            for ox in 0..w {
                let (mut s, mut m) = (0f64, 0f64);
                for ky in 0..3 {
                    for kx in 0..3 {
                        let (iy, ix) = (oy as isize + ky as isize - 1, ox as isize + kx as isize - 1);
                        if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < w {
                            let t = xp[iy as usize * w + ix as usize] as f64 * wk[ky * 3 + kx] as f64;
                            s += t;
                            m += t.abs();
                        }
                    }
                }
                out[oy * w + ox] += s;
                mag[oy * w + ox] += m;
            }
        }
    }
    (out, mag)
}

/// One output channel of conv + batch norm + ReLU in f64, every image: the conv output
/// `y[n][pixel]`, the batch mean and biased variance, and `out[n][pixel]`.
pub struct ChannelReference {
    pub y: Vec<Vec<f64>>,
    pub mean: f64,
    pub var: f64,
    pub out: Vec<Vec<f64>>,
}

/// The reference of output channel `co` (conv of every image, then batch norm).
pub fn conv_bn_channel(inp: &ConvBnInputs, co: usize, eps: f32) -> ChannelReference {
    let g: ConvGeom = inp.geom;
    let y: Vec<Vec<f64>> = (0..g.n as usize).map(|n| conv_plane(inp, n, co).0).collect();
    let count = (g.n * g.hw()) as f64;
    let mean = y.iter().flatten().sum::<f64>() / count;
    let var = y.iter().flatten().map(|v| (v - mean).powi(2)).sum::<f64>() / count;
    let scale = inp.gamma[co] as f64 / (var + eps as f64).sqrt();
    let beta = inp.beta[co] as f64;
    let out = y.iter().map(|p| p.iter().map(|v| ((v - mean) * scale + beta).max(0.0)).collect()).collect();
    ChannelReference { y, mean, var, out }
}

/// `h_t = tanh(W_hh h_{t-1} + W_ih x_t + b)` for every step and sequence, in f64;
/// returns `steps × batch × hidden`.
#[allow(clippy::too_many_arguments)]
pub fn rnn(
    hidden: usize,
    input: usize,
    batch: usize,
    steps: usize,
    w_hh: &[f32],
    w_ih: &[f32],
    bias: &[f32],
    h0: &[f32],
    xs: &[f32],
) -> Vec<f64> {
    let mut h: Vec<f64> = h0.iter().map(|&v| v as f64).collect();
    let mut out = Vec::with_capacity(steps * batch * hidden);
    for t in 0..steps {
        let mut next = vec![0f64; batch * hidden];
        for b in 0..batch {
            let x = &xs[(t * batch + b) * input..][..input];
            for r in 0..hidden {
                let mut s = bias[r] as f64;
                for (j, hv) in h[b * hidden..(b + 1) * hidden].iter().enumerate() {
                    s += w_hh[r * hidden + j] as f64 * hv;
                }
                for (j, xv) in x.iter().enumerate() {
                    s += w_ih[r * input + j] as f64 * *xv as f64;
                }
                next[b * hidden + r] = s.tanh();
            }
        }
        out.extend_from_slice(&next);
        h = next;
    }
    out
}

/// The record pipeline on the host: per-stage counts and the per-key table, from the
/// text lines themselves.
pub fn records(lines: &[String], keys: u32) -> (super::records::StageCounts, Vec<u32>) {
    let mut c = super::records::StageCounts::default();
    let mut table = vec![0u32; keys as usize * 2];
    for line in lines {
        let parsed = line.strip_suffix('\n').and_then(|l| l.split_once(',')).and_then(|(k, v)| {
            let key_ok = !k.is_empty() && k.len() <= 5 && k.bytes().all(|b| b.is_ascii_digit());
            let digits = v.strip_prefix('-').unwrap_or(v);
            let val_ok = !digits.is_empty() && digits.len() <= 9 && digits.bytes().all(|b| b.is_ascii_digit());
            let key: u32 = if key_ok { k.parse().ok()? } else { return None };
            let value: i64 = if val_ok { v.parse().ok()? } else { return None };
            (key < keys).then_some((key, value as i32))
        });
        match parsed {
            None => c.rejected += 1,
            Some((key, value)) => {
                c.parsed += 1;
                if value % 7 == 0 {
                    c.dropped += 1;
                } else {
                    c.kept += 1;
                    c.reduced += 1;
                    let t = (value as u32).wrapping_mul(3).wrapping_add(key);
                    table[2 * key as usize] += 1;
                    table[2 * key as usize + 1] = table[2 * key as usize + 1].wrapping_add(t);
                }
            }
        }
    }
    (c, table)
}

/// The 3×3 conv at one output element (image `n`, channel `co`, pixel `q`), in f64, and
/// `sum |x w|` there.
pub fn conv_at(inp: &ConvBnInputs, n: usize, co: usize, q: usize) -> (f64, f64) {
    let g = inp.geom;
    let (h, w, ci_n) = (g.h as isize, g.w as isize, g.c_in as usize);
    let (oy, ox) = ((q / w as usize) as isize, (q % w as usize) as isize);
    let (mut s, mut m) = (0f64, 0f64);
    for ci in 0..ci_n {
        for ky in 0..3 {
            for kx in 0..3 {
                let (iy, ix) = (oy + ky - 1, ox + kx - 1);
                if iy >= 0 && ix >= 0 && iy < h && ix < w {
                    let xv = inp.x[((n * ci_n + ci) * h as usize + iy as usize) * w as usize + ix as usize] as f64;
                    let t = xv * inp.w[(co * ci_n + ci) * 9 + (ky * 3 + kx) as usize] as f64;
                    s += t;
                    m += t.abs();
                }
            }
        }
    }
    (s, m)
}

/// How a conv + BN result compares with the f64 reference.
#[derive(Clone, Debug, Default)]
pub struct ConvBnCheck {
    /// Relative L2 error of `out` over the channels checked in full.
    pub out_rel: f64,
    /// Largest absolute error of `out` there (outputs are O(1): BN normalizes).
    pub out_max: f64,
    /// Largest error of a sampled conv output `y`, relative to `sum |x w|` there.
    pub y_max_rel: f64,
    /// Largest error of a checked channel's batch mean and of its standard deviation,
    /// relative to that channel's standard deviation.
    pub stats_max_rel: f64,
    /// Elements compared (out) and conv outputs sampled (y).
    pub out_checked: usize,
    pub y_checked: usize,
    /// Elements that are NaN or infinite (a poisoned output left unwritten).
    pub not_finite: usize,
}

impl ConvBnCheck {
    /// Within fp32 tolerance: every error a small multiple of the rounding of a dot
    /// product of `9 c_in` terms accumulated in f32.
    pub fn ok(&self) -> bool {
        self.not_finite == 0 && self.out_rel < 1e-5 && self.out_max < 1e-4 && self.y_max_rel < 1e-5 && self.stats_max_rel < 1e-4
    }
}

/// Compares a conv + BN result with the f64 reference: `out` (and the batch mean and
/// variance) over every image of `channels`, and `y` at `samples` (`(n, c, pixel)`).
#[allow(clippy::too_many_arguments)]
pub fn check_conv_bn(
    inp: &ConvBnInputs,
    eps: f32,
    y: &[f32],
    out: &[f32],
    mean: &[f32],
    var: &[f32],
    channels: &[usize],
    samples: &[(usize, usize, usize)],
) -> ConvBnCheck {
    let g = inp.geom;
    let (hw, co_n) = (g.hw() as usize, g.c_out as usize);
    let mut r = ConvBnCheck { not_finite: out.iter().chain(y).filter(|v| !v.is_finite()).count(), ..Default::default() };
    // Channels in parallel: the reference is a whole conv per channel.
    let refs: Vec<(usize, ChannelReference)> = std::thread::scope(|s| {
        let hs: Vec<_> = channels.iter().map(|&c| s.spawn(move || (c, conv_bn_channel(inp, c, eps)))).collect();
        hs.into_iter().map(|h| h.join().expect("reference thread")).collect()
    });
    let (mut e2, mut r2) = (0f64, 0f64);
    for (c, cr) in &refs {
        let sd = cr.var.sqrt().max(1e-30);
        r.stats_max_rel = r.stats_max_rel.max((mean[*c] as f64 - cr.mean).abs() / sd).max(((var[*c] as f64).sqrt() - sd).abs() / sd);
        for n in 0..g.n as usize {
            let got = &out[(n * co_n + c) * hw..][..hw];
            for (gv, rv) in got.iter().zip(&cr.out[n]) {
                let d = *gv as f64 - rv;
                e2 += d * d;
                r2 += rv * rv;
                r.out_max = r.out_max.max(d.abs());
                r.out_checked += 1;
            }
        }
    }
    r.out_rel = if r2 > 0.0 { (e2 / r2).sqrt() } else { e2.sqrt() };
    for &(n, c, q) in samples {
        let (want, mag) = conv_at(inp, n, c, q);
        let got = y[(n * co_n + c) * hw + q] as f64;
        r.y_max_rel = r.y_max_rel.max((got - want).abs() / mag.max(1e-30));
        r.y_checked += 1;
    }
    if r.not_finite > 0 {
        r.out_max = f64::INFINITY;
    }
    r
}

/// Relative L2 error and largest absolute error of an RNN's outputs against the f64
/// reference (NaN, an unwritten output, counts as an infinite error).
pub fn rnn_errors(got: &[f32], want: &[f64]) -> (f64, f64) {
    let (mut e2, mut r2, mut max) = (0f64, 0f64, 0f64);
    for (g, w) in got.iter().zip(want) {
        let d = if g.is_finite() { *g as f64 - w } else { f64::INFINITY };
        e2 += d * d;
        r2 += w * w;
        max = max.max(d.abs());
    }
    (if r2 > 0.0 { (e2 / r2).sqrt() } else { e2.sqrt() }, max)
}
