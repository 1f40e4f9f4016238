//! [`PinnedBuffer`]: page-locked host memory, mapped into the device's address space,
//! cached or write-combined; and [`PinnedView`] / [`PinnedViewMut`], ranges of one that
//! async copies take.
//!
//! Only pinned memory lets a copy run asynchronously (the copy engine reads or writes
//! it while the host goes on), and that is the hazard: the host must neither free nor
//! touch the memory until the copy is done. Views carry the borrow of their buffer;
//! [`super::ScopedStream`]'s copies demand that borrow for the whole scope, and the
//! scope synchronizes its streams before it returns, so a buffer under a copy can be
//! neither mutated (nor read, under a download) nor dropped. See docs/streams.md.
//!
//! Freeing pinned memory (`cuMemFreeHost`) waits for running kernels, and a resident
//! kernel does not end: while any runtime of the process is resident, a dropped pinned
//! buffer's memory is kept and freed once none is (`crate::driver::resident_kernels`).
//!
//! On the CPU device a pinned buffer is plain host memory (256-byte aligned, zeroed),
//! never write-combined; its "device" address is its host address, and copies are
//! memcpys run by the stream's thread, under the same borrow rules.

use bytemuck::Pod;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut, RangeBounds};

use super::device::Device;
use super::device_buffer::bounds;
use super::device_memory::bytes_of;
use crate::Result;
use crate::backend::cpu::HostAlloc;
use crate::driver::memory::PinnedAlloc;

#[derive(Debug)]
enum Backing {
    Cuda(PinnedAlloc),
    Cpu(HostAlloc),
}

impl Backing {
    fn host_ptr(&self) -> *mut u8 {
        match self {
            Backing::Cuda(a) => a.host_ptr(),
            Backing::Cpu(a) => a.ptr(),
        }
    }
}

/// `len` elements of `T` in pinned, mapped host memory, zeroed at birth.
#[derive(Debug)]
pub struct PinnedBuffer<T: Pod> {
    alloc: Backing,
    len: usize,
    write_combined: bool,
    _gpu: Device,
    _t: PhantomData<T>,
}

impl<T: Pod> PinnedBuffer<T> {
    pub(crate) fn zeroed(gpu: &Device, len: usize, write_combined: bool) -> Result<Self> {
        let bytes = bytes_of::<T>(len)?;
        let Some(ctx) = gpu.cuda_context() else {
            // 256-byte aligned: aligned for any Pod T.
            return Ok(Self {
                alloc: Backing::Cpu(HostAlloc::zeroed(bytes)?),
                len,
                write_combined: false,
                _gpu: gpu.clone(),
                _t: PhantomData,
            });
        };
        gpu.bind()?;
        // cuMemHostAlloc returns page-aligned memory: aligned for any Pod T.
        // SAFETY: `PinnedAlloc::zeroed` demands nothing of its caller; the memory it
        // returns is shared with the device, and every access to it goes through this
        // buffer: host accesses through its borrows (`Deref`, views), device accesses
        // through scoped copies, which hold those borrows until the scope has
        // synchronized them (the module doc), or through `device_ptr` in an `unsafe`
        // launch, whose caller vouches for them.
        let alloc = unsafe { PinnedAlloc::zeroed(ctx, bytes, write_combined)? };
        Ok(Self { alloc: Backing::Cuda(alloc), len, write_combined, _gpu: gpu.clone(), _t: PhantomData })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the memory is write-combined: fast for the host to write and the device
    /// to read over PCIe, very slow for the host to read (never on the CPU device).
    pub fn is_write_combined(&self) -> bool {
        self.write_combined
    }

    /// The address under which kernels can read and write this memory over PCIe (on
    /// the CPU device, its host address).
    pub fn device_ptr(&self) -> u64 {
        match &self.alloc {
            Backing::Cuda(a) => a.device_ptr(),
            Backing::Cpu(a) => a.ptr() as u64,
        }
    }

    /// The whole buffer, for a copy's source.
    pub fn view(&self) -> PinnedView<'_, T> {
        PinnedView { ptr: self.alloc.host_ptr().cast(), len: self.len, _b: PhantomData }
    }

    /// The whole buffer, for a copy's destination.
    pub fn view_mut(&mut self) -> PinnedViewMut<'_, T> {
        PinnedViewMut { ptr: self.alloc.host_ptr().cast(), len: self.len, _b: PhantomData }
    }
}

impl<T: Pod> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        // cuMemFreeHost (in the field's drop, right after this) wants the context current.
        if let Backing::Cuda(_) = self.alloc {
            let _ = self._gpu.bind();
        }
    }
}

impl<T: Pod> Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialized (zeroed, Pod) elements, aligned; a pending copy holds
        // a borrow of `self` (see the module doc), so none runs while this one lives.
        unsafe { std::slice::from_raw_parts(self.alloc.host_ptr().cast(), self.len) }
    }
}

impl<T: Pod> DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.alloc.host_ptr().cast(), self.len) }
    }
}

/// A shared range of a [`PinnedBuffer`]: the source of an upload. Like `&'a [T]`.
#[derive(Debug)]
pub struct PinnedView<'a, T: Pod> {
    ptr: *const T,
    len: usize,
    _b: PhantomData<&'a [T]>,
}

impl<T: Pod> Clone for PinnedView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Pod> Copy for PinnedView<'_, T> {}

// SAFETY: a view is a shared slice.
unsafe impl<T: Pod + Sync> Send for PinnedView<'_, T> {}
unsafe impl<T: Pod + Sync> Sync for PinnedView<'_, T> {}

impl<'a, T: Pod> From<&'a PinnedBuffer<T>> for PinnedView<'a, T> {
    fn from(b: &'a PinnedBuffer<T>) -> Self {
        b.view()
    }
}

impl<'a, T: Pod> PinnedView<'a, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the view holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// A sub-range. Panics if it is out of bounds.
    pub fn slice(self, range: impl RangeBounds<usize>) -> Self {
        self.try_slice(range).unwrap_or_else(|e| panic!("{e}"))
    }
    /// A sub-range; `Error::Config` if it is out of bounds.
    pub fn try_slice(self, range: impl RangeBounds<usize>) -> Result<Self> {
        let r = bounds(range, self.len)?;
        Ok(Self { ptr: self.ptr.wrapping_add(r.start), len: r.len(), _b: PhantomData })
    }
    /// Consecutive views of `chunk` elements (the last may be shorter).
    pub fn chunks(self, chunk: usize) -> impl Iterator<Item = PinnedView<'a, T>> {
        assert!(chunk > 0, "chunk size must be positive");
        (0..self.len).step_by(chunk).map(move |s| self.slice(s..(s + chunk).min(self.len)))
    }
    pub(crate) fn ptr(&self) -> *const T {
        self.ptr
    }
}

/// An exclusive range of a [`PinnedBuffer`]: the destination of a download. Like
/// `&'a mut [T]`: two views of one buffer never overlap.
#[derive(Debug)]
pub struct PinnedViewMut<'a, T: Pod> {
    ptr: *mut T,
    len: usize,
    _b: PhantomData<&'a mut [T]>,
}

// SAFETY: a view is an exclusive slice.
unsafe impl<T: Pod + Send> Send for PinnedViewMut<'_, T> {}
unsafe impl<T: Pod + Sync> Sync for PinnedViewMut<'_, T> {}

impl<'a, T: Pod> From<&'a mut PinnedBuffer<T>> for PinnedViewMut<'a, T> {
    fn from(b: &'a mut PinnedBuffer<T>) -> Self {
        b.view_mut()
    }
}

impl<'a, T: Pod> PinnedViewMut<'a, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the view holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Splits into `[0, mid)` and `[mid, len)`. Panics if `mid > len`.
    pub fn split_at(self, mid: usize) -> (Self, Self) {
        assert!(mid <= self.len, "mid {mid} out of bounds for length {}", self.len);
        let tail = Self { ptr: self.ptr.wrapping_add(mid), len: self.len - mid, _b: PhantomData };
        (Self { ptr: self.ptr, len: mid, _b: PhantomData }, tail)
    }
    /// A sub-range, giving up the rest. Panics if it is out of bounds.
    pub fn slice(self, range: impl RangeBounds<usize>) -> Self {
        self.try_slice(range).unwrap_or_else(|e| panic!("{e}"))
    }
    /// A sub-range, giving up the rest; `Error::Config` if it is out of bounds.
    pub fn try_slice(self, range: impl RangeBounds<usize>) -> Result<Self> {
        let r = bounds(range, self.len)?;
        Ok(Self { ptr: self.ptr.wrapping_add(r.start), len: r.len(), _b: PhantomData })
    }
    /// Disjoint consecutive views of `chunk` elements (the last may be shorter).
    pub fn chunks(self, chunk: usize) -> impl Iterator<Item = PinnedViewMut<'a, T>> {
        assert!(chunk > 0, "chunk size must be positive");
        let mut rest = Some(self);
        std::iter::from_fn(move || {
            let r = rest.take().filter(|r| !r.is_empty())?;
            let n = chunk.min(r.len);
            let (head, tail) = r.split_at(n);
            rest = Some(tail);
            Some(head)
        })
    }
    pub(crate) fn ptr(&self) -> *mut T {
        self.ptr
    }
}

impl Device {
    /// `len` zeroed elements of pinned, mapped, cached host memory: for buffers the
    /// host reads (download destinations) or both reads and writes.
    pub fn pinned<T: Pod>(&self, len: usize) -> Result<PinnedBuffer<T>> {
        PinnedBuffer::zeroed(self, len, false)
    }

    /// `len` zeroed elements of pinned, mapped, write-combined host memory: for buffers
    /// the host only writes (upload sources). Host reads of it are very slow.
    pub fn pinned_write_combined<T: Pod>(&self, len: usize) -> Result<PinnedBuffer<T>> {
        PinnedBuffer::zeroed(self, len, true)
    }
}
