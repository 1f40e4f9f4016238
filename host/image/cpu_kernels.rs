//! An image's ordinary kernels compiled for the host: what the generated image code
//! names, and what the CPU backend's launches run.

use resident_device::DeviceKernel;

/// The host body of an ordinary kernel: its parameters' bytes in, run by the calling
/// thread as the block `resident_device::arch` says it is (CPU backend launches).
#[doc(hidden)]
pub type __CpuKernelFn = unsafe fn(&[u8]);

/// An ordinary kernel's host body (what the generated image code names).
///
/// # Safety
/// As for [`DeviceKernel::run`]; `bytes` must hold a `K::Params`.
#[doc(hidden)]
pub unsafe fn __cpu_kernel<K: DeviceKernel>(bytes: &[u8]) {
    let p: K::Params = bytemuck::pod_read_unaligned(bytes);
    unsafe { K::run(&p) }
}

/// The size of an ordinary kernel's parameter struct: the kernel table's third column,
/// which `Module::function` checks a launch's parameter type against on the CPU (the
/// driver's `cuFuncGetParamInfo` says it on a GPU).
#[doc(hidden)]
pub const fn __cpu_kernel_param_bytes<K: DeviceKernel>() -> usize {
    size_of::<K::Params>()
}

/// One row of an image's table of ordinary kernels compiled for the host: the entry
/// name, the body, and the bytes of its one parameter.
#[doc(hidden)]
pub type __CpuKernelRow = (&'static str, __CpuKernelFn, usize);
