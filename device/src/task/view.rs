//! [`View`]: the elements of a checked buffer slice (or of scratch memory), with
//! bounds-checked element access and atomics, limited to what the task's declaration
//! grants the slice. Never panics: an index out of range is `Err(Status::OutOfRange)`,
//! a write or an atomic update that the declaration does not grant is
//! `Err(Status::Undeclared)`.

use core::marker::PhantomData;

use resident_shared::{Element, Grant, Status};

use crate::arch;

/// `len` elements of `T` in device memory (host memory on the CPU backend), resolved by
/// [`crate::TaskCx::view`]. `Copy`: a view is an address, a length and what the task's
/// declaration grants it (reads always; writes for a slice declared `write`; atomic
/// updates for one declared `write` or `atomic`); the memory stays the runtime's.
///
/// A view borrows the context it was resolved from (`'a`): it cannot outlive the task's
/// run (a view kept past it, in a static or a thread-local, could reach a buffer's
/// memory after the runtime freed it).
pub struct View<'a, T> {
    ptr: *mut T,
    len: u32,
    grant: Grant,
    _run: PhantomData<&'a crate::TaskCx>,
}

impl<T> Clone for View<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for View<'_, T> {}

impl<'a, T: Element> View<'a, T> {
    #[inline(always)]
    pub(crate) fn new(ptr: *mut T, len: u32, grant: Grant) -> Self {
        Self { ptr, len, grant, _run: PhantomData }
    }

    /// Whether the task's declaration lets it write these elements.
    #[inline(always)]
    pub fn writable(&self) -> bool {
        self.grant.contains(Grant::WRITE)
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

    /// Stores `v` at element `i`; `Undeclared` if the slice is not declared `write`.
    #[inline(always)]
    pub fn write(&self, i: u32, v: T) -> Result<(), Status> {
        if !self.writable() {
            return Err(Status::Undeclared);
        }
        if i >= self.len {
            return Err(Status::OutOfRange);
        }
        // SAFETY: as in `read`.
        unsafe { arch::st_racy(self.ptr.add(i as usize), v) };
        Ok(())
    }

    /// The address of element 0, for code that reads in bulk (vector loads). Valid for
    /// reads of `len` elements while the task runs.
    #[inline(always)]
    pub fn as_ptr(&self) -> *const T {
        self.ptr
    }

    /// The address of element 0, for code that writes in bulk: `Undeclared` unless the
    /// slice is declared `write`. Valid for `len` elements while the task runs.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> Result<*mut T, Status> {
        if self.writable() { Ok(self.ptr) } else { Err(Status::Undeclared) }
    }

    /// The address of element 0, for code that updates in bulk with atomic operations
    /// only: `Undeclared` unless the slice is declared `atomic` or `write`. Valid for
    /// `len` elements while the task runs.
    #[inline(always)]
    pub fn as_atomic_ptr(&self) -> Result<*mut T, Status> {
        if self.grant.contains(Grant::ATOMIC) { Ok(self.ptr) } else { Err(Status::Undeclared) }
    }

    /// Elements `start .. start + len` of this view.
    #[inline(always)]
    pub fn sub(&self, start: u32, len: u32) -> Result<Self, Status> {
        if start as u64 + len as u64 > self.len as u64 {
            return Err(Status::OutOfRange);
        }
        Ok(Self { ptr: self.ptr.wrapping_add(start as usize), len, grant: self.grant, _run: PhantomData })
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

impl<T: AtomicElement> View<'_, T> {
    /// Adds `v` to element `i` atomically (relaxed, .gpu); returns the value before.
    /// Called by each lane that calls it: to add once per warp, call from one lane.
    /// `Undeclared` if the slice is declared neither `atomic` nor `write`.
    #[inline(always)]
    pub fn atomic_add(&self, i: u32, v: T) -> Result<T, Status> {
        if !self.grant.contains(Grant::ATOMIC) {
            return Err(Status::Undeclared);
        }
        if i >= self.len {
            return Err(Status::OutOfRange);
        }
        // SAFETY: as in `read`; every access to the element by other tasks is meant to
        // be atomic too (declared `atomic`).
        Ok(unsafe { T::atomic_add(self.ptr.add(i as usize), v) })
    }
}
