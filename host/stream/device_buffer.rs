//! [`DeviceBuffer`]: device memory of `Pod` elements, with access tracking so that
//! stream operations on it are ordered across streams (see `tracker`), and
//! [`DeviceView`], a range of one.
//!
//! The host never dereferences device memory, so operations take shared views even
//! when the device writes through them: what orders the device's accesses is the
//! tracker's events, not Rust's borrows. What the borrows do guarantee is that a
//! buffer is not dropped while a view of it is being enqueued; the free itself comes
//! after every pending access (CUDA: `cuMemFreeAsync` on the internal stream, after
//! waits on their events; CPU: the queued operations hold the allocation until they
//! have run), so dropping a buffer never blocks and never frees memory a stream still
//! uses.
//!
//! On the CPU device the memory is zeroed host memory (256-byte aligned) and
//! [`DeviceBuffer::device_ptr`] is its host address: what kernels compiled for the host
//! dereference.

use bytemuck::Pod;
use std::marker::PhantomData;
use std::ops::{Bound, Range, RangeBounds};
use std::sync::Arc;

use super::device::Device;
use super::device_memory::{DeviceMem, bytes_of};
use super::raw::RawStream;
use super::tracker::{On, Use, ordered};
use crate::driver::context::check;
use crate::{Error, Result};
use cudarc::driver::sys;

/// `len` elements of `T` in device memory (stream-ordered allocator; host memory on the
/// CPU device), zeroed at birth.
#[derive(Debug)]
pub struct DeviceBuffer<T: Pod> {
    pub(crate) mem: Arc<DeviceMem>,
    len: usize,
    pub(crate) gpu: Device,
    _t: PhantomData<T>,
}

impl<T: Pod> DeviceBuffer<T> {
    pub(crate) fn zeroed(gpu: &Device, len: usize) -> Result<Self> {
        let mem = DeviceMem::zeroed(gpu, bytes_of::<T>(len)?)?;
        Ok(Self { mem, len, gpu: gpu.clone(), _t: PhantomData })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address (for interop and launches; accesses through it are not
    /// tracked). On the CPU device, the host address.
    pub fn device_ptr(&self) -> u64 {
        self.mem.ptr()
    }

    /// The whole buffer as a view.
    pub fn view(&self) -> DeviceView<'_, T> {
        DeviceView { buf: self, start: 0, len: self.len }
    }

    /// A range of the buffer. Panics if it is out of bounds, like slice indexing.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> DeviceView<'_, T> {
        self.view().slice(range)
    }

    /// A range of the buffer; `Error::Config` if it is out of bounds.
    pub fn try_slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceView<'_, T>> {
        self.view().try_slice(range)
    }

    /// Copies the buffer to a `Vec`, after every pending write to it (blocks).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = vec![T::zeroed(); self.len];
        self.view().read_into(&mut out)?;
        Ok(out)
    }

    /// Overwrites the buffer from `src`, after every pending access to it (blocks).
    pub fn copy_from_slice(&self, src: &[T]) -> Result<()> {
        self.view().write_from(src)
    }
}

/// A range of a [`DeviceBuffer`]: what copies and kernels take.
#[derive(Debug)]
pub struct DeviceView<'a, T: Pod> {
    buf: &'a DeviceBuffer<T>,
    start: usize,
    len: usize,
}

impl<T: Pod> Clone for DeviceView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Pod> Copy for DeviceView<'_, T> {}

impl<'a, T: Pod> From<&'a DeviceBuffer<T>> for DeviceView<'a, T> {
    fn from(buf: &'a DeviceBuffer<T>) -> Self {
        buf.view()
    }
}

/// `range` within `0..len`, or why not (a typed error, also for bounds that overflow:
/// `Excluded(usize::MAX)` as a start, `Included(usize::MAX)` as an end).
pub(crate) fn bounds(range: impl RangeBounds<usize>, len: usize) -> Result<Range<usize>> {
    let out = || Error::Config(format!("range ({:?}, {:?}) out of bounds for length {len}", range.start_bound(), range.end_bound()));
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1).ok_or_else(out)?,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1).ok_or_else(out)?,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(out());
    }
    Ok(start..end)
}

impl<'a, T: Pod> DeviceView<'a, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A sub-range of this view. Panics if it is out of bounds.
    pub fn slice(self, range: impl RangeBounds<usize>) -> Self {
        self.try_slice(range).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A sub-range of this view; `Error::Config` if it is out of bounds.
    pub fn try_slice(self, range: impl RangeBounds<usize>) -> Result<Self> {
        let r = bounds(range, self.len)?;
        Ok(Self { buf: self.buf, start: self.start + r.start, len: r.len() })
    }

    /// Consecutive views of `chunk` elements (the last may be shorter).
    pub fn chunks(self, chunk: usize) -> impl Iterator<Item = DeviceView<'a, T>> {
        assert!(chunk > 0, "chunk size must be positive");
        (0..self.len).step_by(chunk).map(move |s| self.slice(s..(s + chunk).min(self.len)))
    }

    pub(crate) fn gpu(&self) -> &'a Device {
        &self.buf.gpu
    }

    pub(crate) fn ptr(&self) -> u64 {
        self.buf.mem.ptr() + (self.start * size_of::<T>()) as u64
    }

    pub(crate) fn bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// This view as a tracked use.
    pub(crate) fn use_(&self, write: bool) -> Use<'a> {
        let s = self.start * size_of::<T>();
        Use { mem: &self.buf.mem, bytes: s..s + self.bytes(), write }
    }

    /// Blocking copy into `dst` (pageable host memory), after pending writes.
    pub fn read_into(&self, dst: &mut [T]) -> Result<()> {
        if dst.len() != self.len {
            return Err(Error::LengthMismatch { expected: self.len, got: dst.len() });
        }
        let (dst, src, bytes) = (dst.as_mut_ptr() as usize, self.ptr(), self.bytes());
        self.host_transfer(self.use_(false), "DeviceBuffer::to_vec / read_into", move |on| match on {
            // SAFETY: `dst` is `bytes` writable bytes, borrowed until the copy is
            // complete (`host_transfer` waits); `src` lies in this view.
            RawStream::Cuda(s) => check(unsafe { sys::cuMemcpyDtoHAsync_v2(dst as *mut _, src, bytes, s.raw()) }, "cuMemcpyDtoHAsync"),
            RawStream::Cpu(q) => q.run(move || {
                // SAFETY: as above; the view's buffer is borrowed until `host_transfer`
                // returns, after this copy.
                unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, bytes) };
                Ok(())
            }),
        })
    }

    /// Blocking copy from `src` (pageable host memory), after pending accesses.
    pub fn write_from(&self, src: &[T]) -> Result<()> {
        if src.len() != self.len {
            return Err(Error::LengthMismatch { expected: self.len, got: src.len() });
        }
        let (src, dst, bytes) = (src.as_ptr() as usize, self.ptr(), self.bytes());
        self.host_transfer(self.use_(true), "DeviceBuffer::copy_from_slice / write_from", move |on| match on {
            // SAFETY: `src` is `bytes` readable bytes, borrowed until the copy is
            // complete (`host_transfer` waits); `dst` lies in this view.
            RawStream::Cuda(s) => check(unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src as *const _, bytes, s.raw()) }, "cuMemcpyHtoDAsync"),
            RawStream::Cpu(q) => q.run(move || {
                // SAFETY: as above.
                unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, bytes) };
                Ok(())
            }),
        })
    }

    /// Enqueues `copy` on the device's internal stream after the conflicting pending
    /// accesses (`use_`), then waits for it: the host memory it touches is an ordinary
    /// borrow that ends when this returns.
    fn host_transfer(&self, use_: Use<'_>, what: &str, copy: impl FnOnce(&RawStream) -> Result<()>) -> Result<()> {
        let g = &self.buf.gpu;
        let internal = &g.inner.internal;
        if let RawStream::Cpu(_) = internal {
            super::cpu::refuse_blocking(what)?;
        }
        g.bind()?;
        ordered(On { id: g.inner.internal_id, stream: internal }, &[use_], || copy(internal))?;
        internal.synchronize()
    }
}

impl Device {
    /// `len` zeroed elements of device memory.
    pub fn alloc_zeroed<T: Pod>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::zeroed(self, len)
    }

    /// Device memory holding a copy of `src`.
    pub fn alloc_from<T: Pod>(&self, src: &[T]) -> Result<DeviceBuffer<T>> {
        let b = DeviceBuffer::zeroed(self, src.len())?;
        b.copy_from_slice(src)?;
        Ok(b)
    }
}
