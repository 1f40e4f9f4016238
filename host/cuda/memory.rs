//! Device and pinned host allocations, freed on drop.
//!
//! Device memory for user buffers is allocated while the persistent kernel runs, and
//! freed while it still runs, so neither may wait for the device: a plain `cuMemFree`
//! may synchronize the whole device, which would wait forever on the resident kernel.
//! They come from the virtual memory API (`cuMemCreate` + `cuMemAddressReserve` +
//! `cuMemMap` + `cuMemSetAccess`; freed by `cuMemUnmap` + `cuMemRelease` +
//! `cuMemAddressFree`, none of which waits for kernels). The stream-ordered allocator
//! (`cuMemAllocAsync`) would not wait either, and was used first, but its memory is
//! valid only for work ordered after the allocation on its stream: compute-sanitizer's
//! memcheck reported every access of the (already running) persistent kernel to such a
//! buffer as out of bounds (H200, 2026-11-23). Devices without the virtual memory API
//! fall back to it.

use cudarc::driver::sys::{self, CUdeviceptr, CUstream};
use std::ffi::c_void;

use super::driver::{Context, check};
use crate::accounting::{self, Kind};
use crate::Result;

/// Device memory, mapped through the virtual memory API, from the stream-ordered
/// allocator, or from plain `cuMemAlloc`. Holds its context, so the context outlives
/// it and is current when it is freed.
#[derive(Debug)]
pub struct DeviceAlloc {
    ptr: CUdeviceptr,
    bytes: usize,
    how: How,
    ctx: Context,
}

/// How a [`DeviceAlloc`] was made, and so how it is freed.
#[derive(Debug)]
enum How {
    /// `cuMemAlloc`: freed by `cuMemFree`, which may synchronize the device.
    Plain,
    /// `cuMemAllocAsync` on this stream.
    StreamOrdered(CUstream),
    /// `cuMemCreate` mapped at `ptr`, `mapped` bytes (whole granules); the stream is
    /// the one whose copies may still use it when it is dropped.
    Mapped { handle: sys::CUmemGenericAllocationHandle, mapped: usize, stream: CUstream },
}

// SAFETY: a device address; the driver's calls on it are thread-safe.
unsafe impl Send for DeviceAlloc {}
unsafe impl Sync for DeviceAlloc {}

impl DeviceAlloc {
    /// Allocates `bytes` (at least 1) in stream order on `stream`, zeroes them and waits.
    ///
    /// # Safety
    /// `stream` must belong to `ctx` and outlive the allocation.
    pub unsafe fn zeroed(ctx: &Context, bytes: usize, stream: CUstream) -> Result<Self> {
        ctx.bind()?;
        let bytes = bytes.max(1);
        let this = if vmm_supported(ctx)? {
            unsafe { Self::mapped(ctx, bytes, stream) }?
        } else {
            let mut ptr = 0;
            check(unsafe { sys::cuMemAllocAsync(&mut ptr, bytes, stream) }, "cuMemAllocAsync")?;
            accounting::count(Kind::Device, bytes, true);
            Self { ptr, bytes, how: How::StreamOrdered(stream), ctx: ctx.clone() }
        };
        check(unsafe { sys::cuMemsetD8Async(this.ptr, 0, bytes, stream) }, "cuMemsetD8Async")?;
        check(unsafe { sys::cuStreamSynchronize(stream) }, "cuStreamSynchronize")?;
        Ok(this)
    }

    /// `bytes` of physical device memory (rounded up to the granularity) mapped at a
    /// fresh address range, readable and writable by this device. On failure, undoes
    /// what it did.
    unsafe fn mapped(ctx: &Context, bytes: usize, stream: CUstream) -> Result<Self> {
        let ordinal = ctx.ordinal() as i32;
        let prop = sys::CUmemAllocationProp {
            type_: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            requestedHandleTypes: sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
            location: sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: ordinal },
            win32HandleMetaData: std::ptr::null_mut(),
            allocFlags: sys::CUmemAllocationProp_st__bindgen_ty_1 { compressionType: 0, gpuDirectRDMACapable: 0, usage: 0, reserved: [0; 4] },
        };
        let mut granule = 0usize;
        check(
            unsafe {
                sys::cuMemGetAllocationGranularity(&mut granule, &prop, sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM)
            },
            "cuMemGetAllocationGranularity",
        )?;
        let mapped = bytes.div_ceil(granule.max(1)) * granule.max(1);
        let mut handle = 0;
        check(unsafe { sys::cuMemCreate(&mut handle, mapped, &prop, 0) }, "cuMemCreate")?;
        let mut ptr = 0;
        if let Err(e) = check(unsafe { sys::cuMemAddressReserve(&mut ptr, mapped, 0, 0, 0) }, "cuMemAddressReserve") {
            unsafe { sys::cuMemRelease(handle) };
            return Err(e);
        }
        if let Err(e) = check(unsafe { sys::cuMemMap(ptr, mapped, 0, handle, 0) }, "cuMemMap") {
            unsafe {
                sys::cuMemAddressFree(ptr, mapped);
                sys::cuMemRelease(handle);
            }
            return Err(e);
        }
        // From here on, drop undoes all of it.
        accounting::count(Kind::Device, bytes, true);
        let this = Self { ptr, bytes, how: How::Mapped { handle, mapped, stream }, ctx: ctx.clone() };
        let access = sys::CUmemAccessDesc {
            location: prop.location,
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        check(unsafe { sys::cuMemSetAccess(ptr, mapped, &access, 1) }, "cuMemSetAccess")?;
        Ok(this)
    }

    /// Allocates `bytes` with plain `cuMemAlloc` and zeroes them: for the queue
    /// memory, allocated before the persistent kernel starts and freed after it exits.
    ///
    /// # Safety
    /// Nothing may be resident on the device that the synchronous memset would wait for.
    pub unsafe fn zeroed_sync(ctx: &Context, bytes: usize) -> Result<Self> {
        ctx.bind()?;
        let bytes = bytes.max(1);
        let mut ptr = 0;
        check(unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) }, "cuMemAlloc")?;
        accounting::count(Kind::Device, bytes, true);
        let this = Self { ptr, bytes, how: How::Plain, ctx: ctx.clone() };
        check(unsafe { sys::cuMemsetD8_v2(ptr, 0, bytes) }, "cuMemsetD8")?;
        Ok(this)
    }

    pub fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceAlloc {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        // SAFETY: allocated as `how` says; the owner guarantees that no kernel still
        // uses it, and copies on its stream are waited for here.
        unsafe {
            match self.how {
                How::Plain => {
                    sys::cuMemFree_v2(self.ptr);
                }
                How::StreamOrdered(stream) => {
                    sys::cuMemFreeAsync(self.ptr, stream);
                    sys::cuStreamSynchronize(stream);
                }
                How::Mapped { handle, mapped, stream } => {
                    // The unmap does not wait for the device: a copy still queued on
                    // the stream must be done first.
                    sys::cuStreamSynchronize(stream);
                    sys::cuMemUnmap(self.ptr, mapped);
                    sys::cuMemRelease(handle);
                    sys::cuMemAddressFree(self.ptr, mapped);
                }
            }
        }
        // After a device fault the free fails; the context reset frees it (and the
        // runtime holds nothing of it any more).
        accounting::count(Kind::Device, self.bytes, false);
    }
}

/// Whether the device supports the virtual memory API (every GPU this runtime targets
/// does; checked so that one that does not still works).
fn vmm_supported(ctx: &Context) -> Result<bool> {
    let a = sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED;
    Ok(ctx.attribute(a)? != 0)
}

/// Page-locked host memory mapped into the device's address space. Holds its context.
#[derive(Debug)]
pub struct PinnedAlloc {
    host: *mut u8,
    device: CUdeviceptr,
    bytes: usize,
    ctx: Context,
}

// SAFETY: plain memory; synchronization is the user's (documented per use).
unsafe impl Send for PinnedAlloc {}
unsafe impl Sync for PinnedAlloc {}

impl PinnedAlloc {
    /// Allocates `bytes` of zeroed, mapped, pinned memory. `write_combined` suits memory
    /// the host only writes and the device (or a copy engine) only reads: host reads of
    /// it are very slow.
    ///
    /// # Safety
    /// None: safe to call; `unsafe` because the memory is shared with the device, and
    /// every use of it must say what orders the two sides' accesses.
    pub unsafe fn zeroed(ctx: &Context, bytes: usize, write_combined: bool) -> Result<Self> {
        ctx.bind()?;
        let bytes = bytes.max(1);
        let mut flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
        if write_combined {
            flags |= sys::CU_MEMHOSTALLOC_WRITECOMBINED;
        }
        let mut host: *mut c_void = std::ptr::null_mut();
        check(unsafe { sys::cuMemHostAlloc(&mut host, bytes, flags) }, "cuMemHostAlloc")?;
        // SAFETY: fresh allocation of `bytes`.
        unsafe { std::ptr::write_bytes(host as *mut u8, 0, bytes) };
        let mut device = 0;
        let r = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0) };
        if let Err(e) = check(r, "cuMemHostGetDevicePointer") {
            unsafe { sys::cuMemFreeHost(host) };
            return Err(e);
        }
        accounting::count(Kind::Pinned, bytes, true);
        Ok(Self { host: host as *mut u8, device, bytes, ctx: ctx.clone() })
    }

    pub fn host_ptr(&self) -> *mut u8 {
        self.host
    }
    pub fn device_ptr(&self) -> CUdeviceptr {
        self.device
    }
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for PinnedAlloc {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        // SAFETY: allocated by cuMemHostAlloc; the owner guarantees no work uses it.
        unsafe { sys::cuMemFreeHost(self.host as *mut c_void) };
        accounting::count(Kind::Pinned, self.bytes, false);
    }
}
