//! SM partitions through CUDA green contexts (driver 12.5 or later: green-context
//! streams, `cuGreenCtxStreamCreate`, came with CUDA 12.5).
//!
//! A green context is a view of the device's primary context confined to a set of SMs:
//! it shares the primary context's memory and modules, and a kernel launched on one of
//! its streams runs on its SMs only. The runtime splits the device in two: a partition
//! for its kernels (the persistent grid and the relay warp) and the rest, on which the
//! application's own work can run without meeting the resident blocks
//! (`Sharing::rest_stream`). A green context does not keep other work off its SMs: a
//! kernel launched on an ordinary stream of the primary context may still use them.
//!
//! The driver rounds a request up to its granularity (on sm_90, 8 SMs at least and a
//! multiple of 8: `minSmPartitionSize`, `smCoscheduledAlignment`).

use cudarc::driver::sys::{self, CUdevResource, CUdevResourceType, CUgreenCtx, CUresult};
use std::sync::Arc;

use crate::driver::context::{Context, check};
use crate::{Error, Result};

/// The oldest driver with every call used here: CUDA 12.5 (`cuGreenCtxStreamCreate`;
/// green contexts themselves came with 12.4). Checked before the first of them, since
/// a symbol missing from the driver would make cudarc's loader panic.
const FIRST_DRIVER: i32 = 12050;

/// One green context, destroyed on drop (after every stream made in it: they hold an
/// `Arc` of it).
#[derive(Debug)]
pub struct GreenCtx {
    raw: CUgreenCtx,
    sms: u32,
    /// The primary context the green context retains; bound around the destroy.
    ctx: Context,
}

// SAFETY: a driver handle, usable from any thread; its only mutation is the destroy in
// `drop`, which has `&mut self`.
unsafe impl Send for GreenCtx {}
unsafe impl Sync for GreenCtx {}

impl GreenCtx {
    /// The SMs it runs kernels on.
    pub fn sms(&self) -> u32 {
        self.sms
    }

    pub fn raw(&self) -> CUgreenCtx {
        self.raw
    }

    pub fn context(&self) -> &Context {
        &self.ctx
    }
}

impl Drop for GreenCtx {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        // SAFETY: owned here; every stream made in it held an `Arc` of it and is gone.
        unsafe { sys::cuGreenCtxDestroy(self.raw) };
    }
}

/// The device split in two: the runtime's SMs and the rest.
#[derive(Debug, Clone)]
pub struct Partition {
    pub runtime: Arc<GreenCtx>,
    /// The SMs left over, as a green context of their own (`None` when fewer remain
    /// than the driver's smallest partition).
    pub rest: Option<Arc<GreenCtx>>,
    /// The device's SMs.
    pub total: u32,
}

fn unsupported(why: String) -> Error {
    Error::PartitionUnsupported(why)
}

/// The device's SM resource: count, smallest partition and alignment.
fn device_sms(ctx: &Context) -> Result<CUdevResource> {
    let mut version = 0;
    // SAFETY: the driver writes one int.
    check(unsafe { sys::cuDriverGetVersion(&mut version) }, "cuDriverGetVersion")?;
    if version < FIRST_DRIVER {
        return Err(unsupported(format!(
            "the driver supports CUDA {}.{}; the runtime's green contexts need 12.5 or later",
            version / 1000,
            version % 1000 / 10
        )));
    }
    let mut dev = 0;
    // SAFETY: the driver writes one device handle.
    check(unsafe { sys::cuDeviceGet(&mut dev, ctx.ordinal() as i32) }, "cuDeviceGet")?;
    // SAFETY: plain old data, which the driver fills in.
    let mut res: CUdevResource = unsafe { std::mem::zeroed() };
    // SAFETY: a valid device; the driver writes one resource.
    match unsafe { sys::cuDeviceGetDevResource(dev, &mut res, CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM) } {
        CUresult::CUDA_SUCCESS => Ok(res),
        r @ (CUresult::CUDA_ERROR_NOT_SUPPORTED | CUresult::CUDA_ERROR_INVALID_DEVICE) => {
            Err(unsupported(format!("device {} has no SM resources to split ({r:?})", ctx.ordinal())))
        }
        r => check(r, "cuDeviceGetDevResource").map(|_| res),
    }
}

/// A driver result, with "not supported" (a device or a mode without green contexts,
/// such as some MPS set-ups) as the typed error the config documents.
fn green_check(r: CUresult, call: &'static str) -> Result<()> {
    match r {
        CUresult::CUDA_ERROR_NOT_SUPPORTED => Err(unsupported(format!("{call} returned CUDA_ERROR_NOT_SUPPORTED"))),
        r => check(r, call),
    }
}

/// A green context on the SMs `res` describes.
fn create(ctx: &Context, res: &mut CUdevResource) -> Result<Arc<GreenCtx>> {
    let mut desc = std::ptr::null_mut();
    // SAFETY: `res` came from a split of this device's resource; the driver writes one
    // descriptor.
    green_check(unsafe { sys::cuDevResourceGenerateDesc(&mut desc, res, 1) }, "cuDevResourceGenerateDesc")?;
    let mut dev = 0;
    // SAFETY: the driver writes one device handle.
    check(unsafe { sys::cuDeviceGet(&mut dev, ctx.ordinal() as i32) }, "cuDeviceGet")?;
    let mut raw = std::ptr::null_mut();
    // The default-stream flag is required (documented since 12.4; 0 gave
    // CUDA_ERROR_INVALID_VALUE on the H200 here, 2026-11-26); the runtime makes its own
    // streams.
    let flags = sys::CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM as u32;
    // SAFETY: a descriptor generated just now, a valid device; the driver writes one
    // handle.
    green_check(unsafe { sys::cuGreenCtxCreate(&mut raw, desc, dev, flags) }, "cuGreenCtxCreate")?;
    // SAFETY: `sm` is the member an SM resource fills.
    let sms = unsafe { res.__bindgen_anon_1.sm.smCount };
    Ok(Arc::new(GreenCtx { raw, sms, ctx: ctx.clone() }))
}

/// SMs that a request of `wanted` becomes: at least the smallest partition, rounded up
/// to the alignment. `Err` when that leaves the rest nothing.
pub fn rounded(wanted: u32, total: u32, min: u32, align: u32) -> Result<u32> {
    if wanted == 0 {
        return Err(Error::Config("sm_partition: a partition of 0 SMs".into()));
    }
    let align = align.max(1);
    let n = wanted.max(min).div_ceil(align).saturating_mul(align);
    if n >= total {
        return Err(Error::Config(format!(
            "sm_partition: {wanted} SMs (rounded to {n}: partitions are multiples of {align}, at least {min}) leave nothing of the device's {total} SMs to the rest; use no partition for the whole device"
        )));
    }
    Ok(n)
}

/// Splits the device: `wanted` SMs (rounded up by the driver's rules) for the runtime,
/// the rest apart.
pub fn split(ctx: &Context, wanted: u32) -> Result<Partition> {
    ctx.bind()?;
    let input = device_sms(ctx)?;
    // SAFETY: `sm` is the member an SM resource fills.
    let sm = unsafe { input.__bindgen_anon_1.sm };
    // Drivers before 13.0 do not fill in the granularity: then the documented one of
    // Hopper and later (at least 8 SMs, multiples of 8), which over-asks on older
    // architectures (their minimum is 2 or 4) but never under-asks.
    let (min, align) = match (sm.minSmPartitionSize, sm.smCoscheduledAlignment) {
        (0, _) | (_, 0) => (8, 8),
        g => g,
    };
    let n = rounded(wanted, sm.smCount, min, align)?;
    // SAFETY: plain old data, filled in by the split.
    let (mut group, mut rest): (CUdevResource, CUdevResource) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
    let mut groups = 1u32;
    // SAFETY: one group to fill, the input from this device, the remainder written.
    green_check(
        unsafe { sys::cuDevSmResourceSplitByCount(&mut group, &mut groups, &input, &mut rest, 0, n) },
        "cuDevSmResourceSplitByCount",
    )?;
    if groups != 1 {
        return Err(unsupported(format!("the driver could not carve {n} SMs out of {}", sm.smCount)));
    }
    let runtime = create(ctx, &mut group)?;
    // SAFETY: `sm` is the member an SM resource fills.
    let left = unsafe { rest.__bindgen_anon_1.sm.smCount };
    // A remainder the driver will not make a context of is no rest (the runtime's
    // partition is what was asked for; only `rest_stream` is refused).
    let rest = if left >= min { create(ctx, &mut rest).ok() } else { None };
    Ok(Partition { runtime, rest, total: sm.smCount })
}

#[cfg(test)]
mod tests {
    use super::rounded;

    #[test]
    fn requests_round_to_the_granularity() {
        // sm_90: at least 8, multiples of 8, 132 SMs.
        assert_eq!(rounded(1, 132, 8, 8).unwrap(), 8);
        assert_eq!(rounded(66, 132, 8, 8).unwrap(), 72);
        assert_eq!(rounded(64, 132, 8, 8).unwrap(), 64);
        assert_eq!(rounded(128, 132, 8, 8).unwrap(), 128);
        assert!(rounded(129, 132, 8, 8).is_err());
        assert!(rounded(0, 132, 8, 8).is_err());
        assert!(rounded(u32::MAX, 132, 8, 8).is_err());
        // An alignment of 0 counts as 1.
        assert_eq!(rounded(3, 10, 1, 0).unwrap(), 3);
    }
}
