//! Median wall times of host passes, for the ignored timing tests that look at one
//! host (`helpers::timing`, `validate::timing`, the staging stores); speeds are measured
//! in the benches.

use std::time::Instant;

/// Median wall time of `f` in microseconds, after 20 warm-up calls, over 101 calls:
/// for the host-pass timings (`validate::timing` too). Ignored tests, for a look at
/// one host; speeds are measured in the benches.
pub(crate) fn med(mut f: impl FnMut()) -> f64 {
    for _ in 0..20 {
        f();
    }
    let mut v: Vec<f64> = (0..101)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[50]
}
