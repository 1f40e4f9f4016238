//! Kernel launches, raw: the one place that calls `cuLaunchKernel`/`cuLaunchKernelEx`
//! (the typed API over it is `crate::stream::launch`; the runtime's own kernels go
//! through here too).

use cudarc::driver::sys::{self, CUfunction, CUstream};
use std::ffi::c_void;

use crate::Result;
use crate::driver::context::check;

/// Shared memory a block may use without opting in.
const DEFAULT_SHARED: u32 = 48 * 1024;

/// How to launch: grid and block shape, dynamic shared memory, and the launch
/// attributes this runtime uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawLaunch {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_bytes: u32,
    /// `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`: every block co-resident (grid barriers).
    pub cooperative: bool,
    /// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`: programmatic dependent
    /// launch, the kernel may start before the previous one on the stream ends.
    pub programmatic: bool,
}

/// Launches `f` with one by-value parameter of `param_bytes` at `param` on `stream`.
///
/// # Safety
/// The context must be current; `f` must take exactly one parameter of that size, and
/// what the parameter says (addresses) must be valid for what the kernel does.
pub unsafe fn launch(f: CUfunction, stream: CUstream, cfg: &RawLaunch, param: *mut c_void, name: &'static str) -> Result<()> {
    if cfg.shared_bytes > DEFAULT_SHARED {
        // Opting in is per function and idempotent.
        let attr = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        // SAFETY: a loaded function of the current context (the caller's contract).
        check(unsafe { sys::cuFuncSetAttribute(f, attr, cfg.shared_bytes as i32) }, "cuFuncSetAttribute(max dynamic shared memory)")?;
    }
    let mut args = [param];
    let ((gx, gy, gz), (bx, by, bz)) = (cfg.grid, cfg.block);
    if !cfg.cooperative && !cfg.programmatic {
        return check(
            // SAFETY: the caller's contract (current context, `f` takes one parameter of
            // this size at `param`); `args` lives across the call, which copies it.
            unsafe { sys::cuLaunchKernel(f, gx, gy, gz, bx, by, bz, cfg.shared_bytes, stream, args.as_mut_ptr(), std::ptr::null_mut()) },
            name,
        );
    }
    // SAFETY: a zeroed attribute is a valid (ignored) one; each used below is set whole.
    let mut attrs: [sys::CUlaunchAttribute; 2] = unsafe { std::mem::zeroed() };
    let mut n = 0;
    if cfg.cooperative {
        attrs[n].id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attrs[n].value.cooperative = 1;
        n += 1;
    }
    if cfg.programmatic {
        attrs[n].id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attrs[n].value.programmaticStreamSerializationAllowed = 1;
        n += 1;
    }
    let config = sys::CUlaunchConfig {
        gridDimX: gx,
        gridDimY: gy,
        gridDimZ: gz,
        blockDimX: bx,
        blockDimY: by,
        blockDimZ: bz,
        sharedMemBytes: cfg.shared_bytes,
        hStream: stream,
        attrs: attrs.as_mut_ptr(),
        numAttrs: n as u32,
    };
    // SAFETY: as above; `config` and the attributes it points to live across the call.
    check(unsafe { sys::cuLaunchKernelEx(&config, f, args.as_mut_ptr(), std::ptr::null_mut()) }, name)
}

/// [`launch`] of a one-dimensional grid with a parameter struct `P`.
///
/// # Safety
/// As for [`launch`]: `f` takes exactly one `P`.
pub unsafe fn launch_1d<P>(
    f: CUfunction,
    stream: CUstream,
    grid: u32,
    block: u32,
    shared_bytes: u32,
    params: &P,
    name: &'static str,
) -> Result<()> {
    let cfg = RawLaunch { grid: (grid, 1, 1), block: (block, 1, 1), shared_bytes, ..RawLaunch::default() };
    // SAFETY: the caller's contract (`f` takes one `P`). The driver copies the parameter
    // bytes at the call; it never writes them.
    unsafe { launch(f, stream, &cfg, params as *const P as *mut c_void, name) }
}

/// The kernel's parameters as the driver knows them: their count and the first one's
/// size (`cuFuncGetParamInfo`); `None` if the driver cannot say.
///
/// # Safety
/// `f` must be a loaded function of the current context.
pub unsafe fn params(f: CUfunction) -> Option<(usize, usize)> {
    let (mut offset, mut size) = (0usize, 0usize);
    // SAFETY: a loaded function; out-parameters are written by the driver or left.
    if unsafe { sys::cuFuncGetParamInfo(f, 0, &mut offset, &mut size) } != sys::CUresult::CUDA_SUCCESS {
        return None;
    }
    let mut count = 1;
    while unsafe { sys::cuFuncGetParamInfo(f, count, &mut offset, &mut 0) } == sys::CUresult::CUDA_SUCCESS {
        count += 1;
    }
    Some((count, size))
}

/// Blocks of `f` (with `threads` per block and `shared` bytes each) that fit on one SM
/// at once.
///
/// # Safety
/// `f` must be a loaded function of the current context.
pub unsafe fn blocks_per_sm(f: CUfunction, threads: u32, shared: u32) -> Result<u32> {
    if shared > DEFAULT_SHARED {
        // The query counts blocks of what the function may use, and above 48 KiB that is
        // what it opted in to: opt in now, as the launch will (else the answer is 0, and
        // a cooperative launch of such blocks is refused: seen on the H100 with the
        // fused-ops RNN's 80 KiB blocks). Refused: more than a block may have, none fit.
        let attr = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        // SAFETY: a loaded function of the current context (the caller's contract).
        let r = unsafe { sys::cuFuncSetAttribute(f, attr, shared.min(i32::MAX as u32) as i32) };
        if r != sys::CUresult::CUDA_SUCCESS {
            // Refused because it is more than a block of `f` may have: none fit. Any
            // other failure is the error it is.
            // SAFETY: as above.
            if shared as u64 > unsafe { max_dynamic_shared(f) }? {
                return Ok(0);
            }
            check(r, "cuFuncSetAttribute(max dynamic shared memory)")?;
        }
    }
    let mut n = 0;
    check(
        // SAFETY: as above; the driver writes one i32.
        unsafe { sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, threads as i32, shared as usize) },
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    )?;
    Ok(n.max(0) as u32)
}

/// What the driver reports of `f`: registers per thread, local memory per thread
/// (its stack frame and spills), static shared memory per block, and the most threads
/// a block of it may have.
///
/// # Safety
/// `f` must be a loaded function of the current context.
pub unsafe fn attributes(f: CUfunction) -> Result<[u32; 4]> {
    use sys::CUfunction_attribute as A;
    let mut out = [0u32; 4];
    let attrs = [
        (A::CU_FUNC_ATTRIBUTE_NUM_REGS, "registers"),
        (A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local memory"),
        (A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared memory"),
        (A::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block"),
    ];
    for (o, (attr, what)) in out.iter_mut().zip(attrs) {
        let mut v = 0;
        // SAFETY: a loaded function of the current context (the caller's contract); the
        // driver writes one i32.
        check(unsafe { sys::cuFuncGetAttribute(&mut v, attr, f) }, what)?;
        *o = v.max(0) as u32;
    }
    Ok(out)
}

/// The most dynamic shared memory a block of `f` may opt in to: the device's opt-in
/// maximum per block, less what `f` declares statically.
///
/// # Safety
/// `f` must be a loaded function of the current context.
unsafe fn max_dynamic_shared(f: CUfunction) -> Result<u64> {
    let mut device = 0;
    // SAFETY: a context is current (the caller's contract); the driver writes its device.
    check(unsafe { sys::cuCtxGetDevice(&mut device) }, "cuCtxGetDevice")?;
    let mut optin = 0;
    let attr = sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN;
    // SAFETY: the current context's device; the driver writes one i32.
    check(unsafe { sys::cuDeviceGetAttribute(&mut optin, attr, device) }, "cuDeviceGetAttribute(max shared memory per block, opt-in)")?;
    let mut fixed = 0;
    let attr = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES;
    // SAFETY: a loaded function of the current context; the driver writes one i32.
    check(unsafe { sys::cuFuncGetAttribute(&mut fixed, attr, f) }, "cuFuncGetAttribute(static shared memory)")?;
    Ok((optin.max(0) as u64).saturating_sub(fixed.max(0) as u64))
}
