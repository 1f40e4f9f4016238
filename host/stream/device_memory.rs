//! [`DeviceMem`]: one allocation of device memory (CUDA's stream-ordered allocator) or
//! of its stand-in on the CPU device (zeroed host memory), with the access tracker of
//! its bytes. Shared: by its [`super::DeviceBuffer`], and on the CPU by every queued or
//! captured operation that touches it, so it is freed after the last of them.
//!
//! On CUDA the free is stream-ordered instead: `cuMemFreeAsync` on the device's
//! internal stream after waits for every pending access (nothing on CUDA holds a clone
//! besides the buffer).

use std::sync::Arc;

use super::device::Device;
use super::tracker::Tracker;
use crate::backend::cpu::HostAlloc;
use crate::driver::context::check;
use crate::{Error, Result};
use cudarc::driver::sys;

#[derive(Debug)]
enum Backing {
    /// Device memory of this device, freed in `Drop` on its internal stream.
    Cuda {
        ptr: u64,
        gpu: Device,
    },
    Cpu(HostAlloc),
}

#[derive(Debug)]
pub(crate) struct DeviceMem {
    /// Events of pending accesses: dropped before `backing`, whose context they need.
    pub tracker: Tracker,
    backing: Backing,
}

impl DeviceMem {
    /// `bytes` (at least one) of zeroed memory, ready for any stream when this returns.
    pub fn zeroed(gpu: &Device, bytes: usize) -> Result<Arc<Self>> {
        let bytes = bytes.max(1);
        let Some(internal) = gpu.cuda_internal() else {
            let host = HostAlloc::zeroed(bytes)?;
            return Ok(Arc::new(Self { tracker: Tracker::default(), backing: Backing::Cpu(host) }));
        };
        gpu.bind()?;
        let mut ptr = 0;
        // SAFETY: the context is current; `internal` is its live stream.
        check(unsafe { sys::cuMemAllocAsync(&mut ptr, bytes, internal) }, "cuMemAllocAsync")?;
        let this = Self { tracker: Tracker::default(), backing: Backing::Cuda { ptr, gpu: gpu.clone() } };
        // SAFETY: `bytes` bytes allocated just above, on the same stream.
        check(unsafe { sys::cuMemsetD8Async(ptr, 0, bytes, internal) }, "cuMemsetD8Async")?;
        // Other streams may use the buffer as soon as this returns: the allocation and
        // the zeroing must be complete, not just enqueued.
        gpu.inner.internal.synchronize()?;
        Ok(Arc::new(this))
    }

    /// The device address; on the CPU device, the host address.
    pub fn ptr(&self) -> u64 {
        match &self.backing {
            Backing::Cuda { ptr, .. } => *ptr,
            Backing::Cpu(host) => host.ptr() as u64,
        }
    }
}

/// The bytes of `len` elements of `T`, or a typed error if they overflow.
pub(crate) fn bytes_of<T>(len: usize) -> Result<usize> {
    len.checked_mul(size_of::<T>()).ok_or_else(|| Error::Config(format!("{len} elements of {} bytes overflow usize", size_of::<T>())))
}

impl Drop for DeviceMem {
    fn drop(&mut self) {
        let Backing::Cuda { ptr, gpu } = &self.backing else { return };
        let Some(internal) = gpu.cuda_internal() else { return };
        if gpu.bind().is_err() {
            return;
        }
        // Free in stream order after every pending access. If a wait cannot be
        // enqueued, leak the memory rather than free it under a running copy.
        if self.tracker.wait_all(&gpu.inner.internal).is_ok() {
            // SAFETY: allocated by cuMemAllocAsync in this context; every access to it
            // is ordered before the free by the waits above.
            unsafe { sys::cuMemFreeAsync(*ptr, internal) };
        }
    }
}
