//! `axpy`: `y = alpha * x + y` on two f32 slices, the memory-bound reference task.
//!
//! The warp moves 16-byte vectors, coalesced across lanes, and issues all loads of a
//! chunk (`UNROLL` vectors of x and of y per lane) before the first use, so that enough
//! bytes are in flight per warp to approach device bandwidth.

use resident_shared::{ArgError, Declare, Status, TaskId};

use super::{Axpy, AxpyRaw, ids};
use crate::{DeviceTask, TaskCx, arch};

const UNROLL: usize = 8;

/// Longest axpy the relay runs itself (floats): about a microsecond of one warp's time.
const RELAY_AXPY_MAX: u32 = 1024;

impl DeviceTask for Axpy {
    const ID: TaskId = ids::AXPY;
    // SAFETY: for any arguments, `run` views `x` (declared `read`) and `y` (declared `write`), writes `y`: exactly what `declare` names.
    const DECLARATION_CHECK: crate::DeclarationCheck = unsafe { crate::DeclarationCheck::vouched() };
    const RELAY: bool = true;
    #[inline]
    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.read(self.x);
        d.write(self.y);
        if self.x.len != self.y.len { Err(ArgError::LengthMismatch(self.x.len, self.y.len)) } else { Ok(()) }
    }
    #[inline(always)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let alpha = self.alpha;
        if self.x.len != self.y.len {
            return Err(Status::BadArgs);
        }
        // Both entries' loads first, then the checks: one wait, not two.
        let (lx, ly) = (cx.lookup(self.x), cx.lookup(self.y));
        let (x, y) = (lx.view()?, ly.view()?);
        // SAFETY: both views hold `len` f32s of live buffers.
        unsafe { axpy(alpha, x.as_ptr(), y.as_mut_ptr()?, x.len() as usize) };
        Ok(x.len() as u64)
    }
    fn on_relay(&self) -> bool {
        self.x.len <= RELAY_AXPY_MAX
    }
}

impl DeviceTask for AxpyRaw {
    const ID: TaskId = ids::AXPY_RAW;
    const UNCHECKED: bool = true;
    #[inline]
    fn declare(&self, _: &mut Declare<'_>) -> Result<(), ArgError> {
        Ok(())
    }
    /// The raw-address form: no buffer check, the host's `unsafe` caller vouches for
    /// the addresses. Not inlined: one copy of the vector loop stays in the persistent
    /// loop, this one is a call (the loop's register budget).
    #[inline(never)]
    fn run(&self, _: &TaskCx) -> Result<u64, Status> {
        let (x, y, len) = (self.x as *const f32, self.y as *mut f32, self.len);
        if !(x as usize | y as usize).is_multiple_of(4) {
            return Err(Status::BadArgs);
        }
        // SAFETY: an unchecked task runs only if the host took it from
        // `Batch::submit_unchecked` (never as a pushed child: `task::run_as`), whose caller
        // promised that both addresses hold `len` f32s.
        unsafe { axpy(self.alpha, x, y, len as usize) };
        Ok(len as u64)
    }
}

/// `y[i] += alpha * x[i]` for `i < len`, by the calling warp.
///
/// # Safety
/// `x` and `y` must be valid for `len` f32s. Another thread may access them meanwhile
/// (racing tasks): every access is racy-safe (`arch::ld_racy`), so that only gives torn
/// values.
#[inline(always)]
pub(crate) unsafe fn axpy(alpha: f32, x: *const f32, y: *mut f32, len: usize) {
    let lane = arch::lane_id() as usize;
    let w = arch::WARP as usize;
    let mut done = 0;
    if (x as usize | y as usize).is_multiple_of(16) {
        let (x4, y4) = (x as *const [f32; 4], y as *mut [f32; 4]);
        let n4 = len / 4;
        let chunk = UNROLL * w;
        let mut base = 0;
        // Racy accesses throughout: another task may write `y` meanwhile (a torn
        // value on either device, never undefined behaviour: `arch::ld_racy`).
        while base + chunk <= n4 {
            let mut xv = [[0.0f32; 4]; UNROLL];
            let mut yv = [[0.0f32; 4]; UNROLL];
            for u in 0..UNROLL {
                let i = base + u * w + lane;
                unsafe {
                    xv[u] = arch::ld_racy_f32x4(x4.add(i));
                    yv[u] = arch::ld_racy_f32x4(y4.add(i));
                }
            }
            for u in 0..UNROLL {
                let i = base + u * w + lane;
                let mut r = yv[u];
                for j in 0..4 {
                    r[j] += alpha * xv[u][j];
                }
                unsafe { arch::st_racy_f32x4(y4.add(i), r) };
            }
            base += chunk;
        }
        let mut i = base + lane;
        while i < n4 {
            unsafe {
                let (xv, mut r) = (arch::ld_racy_f32x4(x4.add(i)), arch::ld_racy_f32x4(y4.add(i)));
                for j in 0..4 {
                    r[j] += alpha * xv[j];
                }
                arch::st_racy_f32x4(y4.add(i), r);
            }
            i += w;
        }
        done = n4 * 4;
    }
    let mut i = done + lane;
    while i < len {
        unsafe { arch::st_racy(y.add(i), arch::ld_racy(y.add(i)) + alpha * arch::ld_racy(x.add(i))) };
        i += w;
    }
}
