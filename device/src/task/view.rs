//! [`View`]: the elements of a checked buffer slice (or of scratch memory), with
//! bounds-checked element access and atomics. Never panics: an index out of range is
//! `Err(Status::OutOfRange)`.

use resident_shared::{Element, Status};

use crate::arch;

/// `len` elements of `T` in device memory (host memory on the CPU backend), resolved by
/// [`crate::TaskCx::view`]. `Copy`: a view is an address and a length; the memory
/// stays the runtime's.
pub struct View<T> {
    ptr: *mut T,
    len: u32,
}

impl<T> Clone for View<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for View<T> {}

impl<T: Element> View<T> {
    #[inline(always)]
    pub(crate) fn new(ptr: *mut T, len: u32) -> Self {
        Self { ptr, len }
    }

    /// Elements in the view.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }
    /// Whether it holds no element.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `i`.
    #[inline(always)]
    pub fn read(&self, i: u32) -> Result<T, Status> {
        if i >= self.len {
            return Err(Status::OutOfRange);
        }
        // SAFETY: `i < len`, and the view's `len` elements lie in a live buffer (checked
        // against the buffer table) or in this warp's scratch memory. A concurrent write
        // by another task (or the host) is a race on a value, not on memory outside the
        // buffer: a racy access gives a torn value, never undefined behaviour.
        Ok(unsafe { arch::ld_racy(self.ptr.add(i as usize)) })
    }

    /// Stores `v` at element `i`.
    #[inline(always)]
    pub fn write(&self, i: u32, v: T) -> Result<(), Status> {
        if i >= self.len {
            return Err(Status::OutOfRange);
        }
        // SAFETY: as in `read`.
        unsafe { arch::st_racy(self.ptr.add(i as usize), v) };
        Ok(())
    }

    /// The address of element 0, for code that reads or writes in bulk (vector loads).
    /// Valid for `len` elements while the task runs.
    #[inline(always)]
    pub fn as_ptr(&self) -> *mut T {
        self.ptr
    }

    /// Elements `start .. start + len` of this view.
    #[inline(always)]
    pub fn sub(&self, start: u32, len: u32) -> Result<Self, Status> {
        if start as u64 + len as u64 > self.len as u64 {
            return Err(Status::OutOfRange);
        }
        Ok(Self { ptr: self.ptr.wrapping_add(start as usize), len })
    }
}

/// Element types with device atomics (relaxed, GPU scope: counters and sums, ordered for
/// the host by the task's completion).
pub trait AtomicElement: Element {
    #[doc(hidden)]
    unsafe fn atomic_add(p: *mut Self, v: Self) -> Self;
}

impl AtomicElement for u32 {
    #[inline(always)]
    unsafe fn atomic_add(p: *mut Self, v: Self) -> Self {
        unsafe { arch::atom_add_relaxed_gpu(p, v) }
    }
}
impl AtomicElement for i32 {
    #[inline(always)]
    unsafe fn atomic_add(p: *mut Self, v: Self) -> Self {
        unsafe { arch::atom_add_relaxed_gpu(p as *mut u32, v as u32) as i32 }
    }
}
impl AtomicElement for u64 {
    #[inline(always)]
    unsafe fn atomic_add(p: *mut Self, v: Self) -> Self {
        unsafe { arch::atom_add_relaxed_gpu_u64(p, v) }
    }
}
impl AtomicElement for f32 {
    #[inline(always)]
    unsafe fn atomic_add(p: *mut Self, v: Self) -> Self {
        unsafe { arch::atom_add_relaxed_gpu_f32(p, v) }
    }
}

impl<T: AtomicElement> View<T> {
    /// Adds `v` to element `i` atomically (relaxed, .gpu); returns the value before.
    /// Called by each lane that calls it: to add once per warp, call from one lane.
    #[inline(always)]
    pub fn atomic_add(&self, i: u32, v: T) -> Result<T, Status> {
        if i >= self.len {
            return Err(Status::OutOfRange);
        }
        // SAFETY: as in `read`; every access to the element by other tasks is meant to
        // be atomic too (declared `atomic`).
        Ok(unsafe { T::atomic_add(self.ptr.add(i as usize), v) })
    }
}
