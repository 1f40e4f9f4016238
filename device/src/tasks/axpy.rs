//! `axpy`: `y = alpha * x + y` on two f32 slices, the memory-bound reference task.
//!
//! The warp moves 16-byte vectors, coalesced across lanes, and issues all loads of a
//! chunk (`UNROLL` vectors of x and of y per lane) before the first use, so that enough
//! bytes are in flight per warp to approach device bandwidth.

use resident_shared::{Status, Task};

use super::TaskContext;
use crate::{arch, buffers};

const UNROLL: usize = 8;

#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct F4([f32; 4]);

/// # Safety
/// See [`super::execute`].
#[inline(always)]
pub unsafe fn run(task: &Task, cx: &TaskContext) -> Result<u64, Status> {
    let alpha = f32::from_bits(task.args[0]);
    let xs = task.arg_slice(1);
    let ys = task.arg_slice(4);
    if xs.len != ys.len {
        return Err(Status::BadArgs);
    }
    // Both entries' loads first, then the checks: one wait, not two.
    let (ex, ey) = unsafe { (buffers::entry(cx.buffers, xs), buffers::entry(cx.buffers, ys)) };
    let x = buffers::check::<f32>(ex, xs)?;
    let y = buffers::check::<f32>(ey, ys)?;
    unsafe { axpy(alpha, x, y, xs.len as usize) };
    Ok(xs.len as u64)
}

/// The raw-address form (`Opcode::AxpyRaw`): no buffer check, the host's `unsafe`
/// caller vouches for the addresses. Not inlined: one copy of the vector loop stays in
/// the persistent loop, this one is a call (the loop's register budget).
///
/// # Safety
/// `args[1..3]` and `args[3..5]` must address `args[5]` valid f32s each.
#[inline(never)]
pub unsafe fn run_raw(task: &Task) -> Result<u64, Status> {
    let alpha = f32::from_bits(task.args[0]);
    let (x, y, len) = (task.arg_u64(1) as *const f32, task.arg_u64(3) as *mut f32, task.args[5]);
    if !(x as usize | y as usize).is_multiple_of(4) {
        return Err(Status::BadArgs);
    }
    unsafe { axpy(alpha, x, y, len as usize) };
    Ok(len as u64)
}

#[inline(always)]
pub(crate) unsafe fn axpy(alpha: f32, x: *const f32, y: *mut f32, len: usize) {
    let lane = arch::lane_id() as usize;
    let w = arch::WARP as usize;
    let mut done = 0;
    if (x as usize | y as usize).is_multiple_of(16) {
        let (x4, y4) = (x as *const F4, y as *mut F4);
        let n4 = len / 4;
        let chunk = UNROLL * w;
        let mut base = 0;
        while base + chunk <= n4 {
            let mut xv = [F4([0.0; 4]); UNROLL];
            let mut yv = [F4([0.0; 4]); UNROLL];
            for u in 0..UNROLL {
                let i = base + u * w + lane;
                unsafe {
                    xv[u] = x4.add(i).read();
                    yv[u] = y4.add(i).read();
                }
            }
            for u in 0..UNROLL {
                let i = base + u * w + lane;
                let mut r = yv[u];
                for j in 0..4 {
                    r.0[j] += alpha * xv[u].0[j];
                }
                unsafe { y4.add(i).write(r) };
            }
            base += chunk;
        }
        let mut i = base + lane;
        while i < n4 {
            unsafe {
                let (xv, mut r) = (x4.add(i).read(), y4.add(i).read());
                for j in 0..4 {
                    r.0[j] += alpha * xv.0[j];
                }
                y4.add(i).write(r);
            }
            i += w;
        }
        done = n4 * 4;
    }
    let mut i = done + lane;
    while i < len {
        unsafe { *y.add(i) += alpha * *x.add(i) };
        i += w;
    }
}
