//! Device and pinned host allocations, freed on drop.
//!
//! Device memory for user buffers comes from the stream-ordered allocator
//! (`cuMemAllocAsync`/`cuMemFreeAsync`): a plain `cuMemFree` may synchronize the whole
//! device, which would wait forever on the resident kernel. The virtual memory API
//! (`cuMemCreate`/`cuMemMap`) was tried for compute-sanitizer's sake and dropped: memcheck
//! rejected the resident kernel's accesses to it just the same (it accepts only what
//! existed at the kernel's launch: the buffer arena, `host/driver/arena.rs`, is what works), and
//! every buffer took a whole 2 MiB granule (H100, 2026-11-23).

use cudarc::driver::sys::{self, CUdeviceptr, CUstream};
use std::ffi::c_void;

use crate::Result;
use crate::driver::context::{Context, check};
use crate::util::accounting::{self, Kind};

/// Device memory, from the stream-ordered allocator or plain `cuMemAlloc`. Holds its
/// context, so the context outlives it and is current when it is freed.
#[derive(Debug)]
pub struct DeviceAlloc {
    ptr: CUdeviceptr,
    bytes: usize,
    stream: CUstream,
    ctx: Context,
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
        let mut ptr = 0;
        check(unsafe { sys::cuMemAllocAsync(&mut ptr, bytes, stream) }, "cuMemAllocAsync")?;
        accounting::count(Kind::Device, bytes, true);
        let this = Self { ptr, bytes, stream, ctx: ctx.clone() };
        check(unsafe { sys::cuMemsetD8Async(ptr, 0, bytes, stream) }, "cuMemsetD8Async")?;
        check(unsafe { sys::cuStreamSynchronize(stream) }, "cuStreamSynchronize")?;
        Ok(this)
    }

    /// Allocates `bytes` with plain `cuMemAlloc` and zeroes them, and returns once the
    /// zeroes have landed: for the queue memory, allocated before the persistent kernel
    /// starts and freed after it exits.
    ///
    /// `cuMemsetD8` on device memory is asynchronous to the host: it is queued on the
    /// legacy default stream, which the runtime's non-blocking streams are not ordered
    /// after. Without the synchronization below, the kernel launched next on the kernel
    /// stream could start before the memset ran. On a GPU time-sliced between many
    /// contexts (the hostile suite's 24 processes) the two were dispatched together in
    /// the context's next slice: warps claimed slots, then the header's zeroing reset
    /// `head`, and the first slots ran twice (a segment count overshot: a ticket
    /// resolved before its task ran, or never resolved).
    ///
    /// # Safety
    /// Nothing may be resident on the device that the memset would wait for.
    pub unsafe fn zeroed_sync(ctx: &Context, bytes: usize) -> Result<Self> {
        ctx.bind()?;
        let bytes = bytes.max(1);
        let mut ptr = 0;
        check(unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) }, "cuMemAlloc")?;
        accounting::count(Kind::Device, bytes, true);
        let this = Self { ptr, bytes, stream: std::ptr::null_mut(), ctx: ctx.clone() };
        check(unsafe { sys::cuMemsetD8_v2(ptr, 0, bytes) }, "cuMemsetD8")?;
        // The legacy stream (null): waits for the memset (and nothing that runs on the
        // runtime's non-blocking streams, such as a resident kernel; but work a user
        // queued on the legacy stream, or on a blocking stream of the primary context,
        // is waited for: a runtime made behind it starts once it is done).
        check(unsafe { sys::cuStreamSynchronize(std::ptr::null_mut()) }, "cuStreamSynchronize(legacy)")?;
        Ok(this)
    }

    pub fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }
}

impl Drop for DeviceAlloc {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        // SAFETY: allocated by cuMemAllocAsync on this stream; the owner guarantees no
        // work still uses it.
        unsafe {
            if self.stream.is_null() {
                sys::cuMemFree_v2(self.ptr);
            } else {
                sys::cuMemFreeAsync(self.ptr, self.stream);
                sys::cuStreamSynchronize(self.stream);
            }
        }
        // After a device fault the free fails; the context reset frees it (and the
        // runtime holds nothing of it any more).
        accounting::count(Kind::Device, self.bytes, false);
    }
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
            // SAFETY: just allocated, unused.
            unsafe { super::resident_kernels::free_host(ctx, host) };
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
}

impl Drop for PinnedAlloc {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc; the owner guarantees no work uses it.
        // Deferred while a resident kernel runs (a free would wait for it forever); the
        // accounting below counts it as freed now, when it is given up.
        unsafe { super::resident_kernels::free_host(&self.ctx, self.host as *mut c_void) };
        accounting::count(Kind::Pinned, self.bytes, false);
    }
}
