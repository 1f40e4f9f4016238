//! [`DeviceBuffer`]: device memory of `Pod` elements, with access tracking so that
//! stream operations on it are ordered across streams (see `tracker`), and
//! [`DeviceView`], a range of one.
//!
//! The host never dereferences device memory, so operations take shared views even
//! when the device writes through them: what orders the device's accesses is the
//! tracker's events, not Rust's borrows. What the borrows do guarantee is that a
//! buffer is not dropped while a view of it is being enqueued; the free itself is
//! stream-ordered after every pending access (`cuMemFreeAsync` on the internal stream,
//! after waits on their events), so dropping a buffer never blocks and never frees
//! memory a stream still uses.

use bytemuck::Pod;
use cudarc::driver::sys::{self, CUdeviceptr};
use std::marker::PhantomData;
use std::ops::{Bound, Range, RangeBounds};

use super::device::Gpu;
use super::tracker::{On, Tracker, Use, ordered};
use crate::cuda::driver::check;
use crate::{Error, Result};

/// `len` elements of `T` in device memory (stream-ordered allocator), zeroed at birth.
#[derive(Debug)]
pub struct DeviceBuffer<T: Pod> {
    ptr: CUdeviceptr,
    len: usize,
    /// Events of pending accesses: destroyed before `gpu` (whose context they belong to).
    pub(crate) tracker: Tracker,
    pub(crate) gpu: Gpu,
    _t: PhantomData<T>,
}

impl<T: Pod> DeviceBuffer<T> {
    pub(crate) fn zeroed(gpu: &Gpu, len: usize) -> Result<Self> {
        gpu.bind()?;
        let bytes = (len * size_of::<T>()).max(1);
        let raw = gpu.inner.internal.raw();
        let mut ptr = 0;
        check(unsafe { sys::cuMemAllocAsync(&mut ptr, bytes, raw) }, "cuMemAllocAsync")?;
        let this = Self { ptr, len, tracker: Tracker::default(), gpu: gpu.clone(), _t: PhantomData };
        check(unsafe { sys::cuMemsetD8Async(ptr, 0, bytes, raw) }, "cuMemsetD8Async")?;
        // Other streams may use the buffer as soon as this returns: the allocation and
        // the zeroing must be complete, not just enqueued.
        gpu.inner.internal.synchronize()?;
        Ok(this)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address (for interop; accesses through it are not tracked).
    pub fn device_ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    /// The whole buffer as a view.
    pub fn view(&self) -> DeviceView<'_, T> {
        DeviceView { buf: self, start: 0, len: self.len }
    }

    /// A range of the buffer. Panics if it is out of bounds, like slice indexing.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> DeviceView<'_, T> {
        self.view().slice(range)
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

impl<T: Pod> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.gpu.bind().is_err() {
            return;
        }
        let raw = self.gpu.inner.internal.raw();
        // Free in stream order after every pending access. If a wait cannot be
        // enqueued, leak the memory rather than free it under a running copy.
        if self.tracker.wait_all(raw).is_ok() {
            unsafe { sys::cuMemFreeAsync(self.ptr, raw) };
        }
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

pub(crate) fn bounds(range: impl RangeBounds<usize>, len: usize) -> Range<usize> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s + 1,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e + 1,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    assert!(start <= end && end <= len, "range {start}..{end} out of bounds for length {len}");
    start..end
}

impl<'a, T: Pod> DeviceView<'a, T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A sub-range of this view. Panics if it is out of bounds.
    pub fn slice(self, range: impl RangeBounds<usize>) -> Self {
        let r = bounds(range, self.len);
        Self { buf: self.buf, start: self.start + r.start, len: r.len() }
    }

    /// Consecutive views of `chunk` elements (the last may be shorter).
    pub fn chunks(self, chunk: usize) -> impl Iterator<Item = DeviceView<'a, T>> {
        assert!(chunk > 0, "chunk size must be positive");
        (0..self.len).step_by(chunk).map(move |s| self.slice(s..(s + chunk).min(self.len)))
    }

    pub(crate) fn gpu(&self) -> &'a Gpu {
        &self.buf.gpu
    }

    pub(crate) fn ptr(&self) -> CUdeviceptr {
        self.buf.ptr + (self.start * size_of::<T>()) as u64
    }

    pub(crate) fn bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// This view as a tracked use.
    pub(crate) fn use_(&self, write: bool) -> Use<'a> {
        let s = self.start * size_of::<T>();
        Use { tracker: &self.buf.tracker, bytes: s..s + self.bytes(), write }
    }

    /// Blocking copy into `dst` (pageable host memory), after pending writes.
    pub fn read_into(&self, dst: &mut [T]) -> Result<()> {
        if dst.len() != self.len {
            return Err(Error::LengthMismatch { expected: self.len, got: dst.len() });
        }
        let g = &self.buf.gpu.inner;
        self.buf.gpu.bind()?;
        let on = On { id: g.internal_id, raw: g.internal.raw() };
        ordered(on, &[self.use_(false)], || {
            check(unsafe { sys::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr().cast(), self.ptr(), self.bytes(), on.raw) }, "cuMemcpyDtoHAsync")
        })?;
        // The destination is an ordinary borrow that ends when this returns: wait.
        g.internal.synchronize()
    }

    /// Blocking copy from `src` (pageable host memory), after pending accesses.
    pub fn write_from(&self, src: &[T]) -> Result<()> {
        if src.len() != self.len {
            return Err(Error::LengthMismatch { expected: self.len, got: src.len() });
        }
        let g = &self.buf.gpu.inner;
        self.buf.gpu.bind()?;
        let on = On { id: g.internal_id, raw: g.internal.raw() };
        ordered(on, &[self.use_(true)], || {
            check(unsafe { sys::cuMemcpyHtoDAsync_v2(self.ptr(), src.as_ptr().cast(), self.bytes(), on.raw) }, "cuMemcpyHtoDAsync")
        })?;
        g.internal.synchronize()
    }
}

impl Gpu {
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
