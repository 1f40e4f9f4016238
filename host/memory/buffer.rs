//! Device buffers and the registry that names them to tasks.
//!
//! A [`Buffer`] owns device memory (host memory on the CPU backend) and a slot in the
//! buffer table. Tasks refer to it through [`Slice`]s (handle, offset, length),
//! which the runtime checks at submit time and the device checks again.
//! Dropping a buffer never waits: no task submitted after the drop can name it, and its
//! memory and table entry stay until every task submitted before the drop has
//! completed (host/memory/reclaim.rs), so no task can reach freed memory.

use resident_shared::{BufferHandle, ElemType, Element, Slice};
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use crate::backend::Memory;
use crate::memory::owner::Owner;
use crate::memory::reclaim::Held;
use crate::{Error, Result};

/// A typed device buffer.
pub struct Buffer<T: Element> {
    handle: BufferHandle,
    len: u32,
    /// `None` once dropped (taken to host/memory/reclaim.rs).
    mem: Option<Memory>,
    /// The end of everything published when the buffer was registered: no task
    /// before it can name the buffer, so host accesses never wait for those.
    born: u64,
    _t: PhantomData<T>,
    /// Its memory goes to the runtime at the drop (host/memory/reclaim.rs), which frees it on
    /// its transfer stream once no task can use it.
    shared: Arc<dyn Owner>,
}

impl<T: Element> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer").field("handle", &self.handle).field("len", &self.len).finish()
    }
}

impl<T: Element> Buffer<T> {
    pub(crate) fn new(shared: Arc<dyn Owner>, len: usize) -> Result<Self> {
        let len32 = u32::try_from(len).map_err(|_| Error::BufferTooLarge(len))?;
        let bytes = len.checked_mul(size_of::<T>()).ok_or(Error::BufferTooLarge(len))?;
        // What earlier drops left, if no task can use it any more: room first.
        shared.reclaim();
        // A driver call on a device that faulted before anyone polled it fails with
        // the sticky error: the fault then, recorded (`Owner::explain`).
        let mem = shared.backend().alloc(bytes).map_err(|e| shared.explain(e))?;
        // Every task before `born` was written and checked before the registration below
        // (it is published), so it cannot name this buffer; a task of a reservation
        // opened earlier but not yet published can (its pushes are checked as they come).
        let born = shared.published();
        // The entry is in the device's table before any producer can see the handle
        // (the write lock), so before any task naming it is published.
        let mut r = shared.registries().write();
        let handle = r.registry.register(mem.addr(), len32, ElemType::of::<T>())?;
        if let Err(e) = shared.backend().set_buffer_entry(handle.index(), r.registry.entry(handle).unwrap()) {
            r.registry.unregister(handle);
            drop(r);
            return Err(shared.explain(e));
        }
        drop(r);
        Ok(Self { shared, handle, len: len32, mem: Some(mem), born, _t: PhantomData })
    }

    /// Elements in the buffer.
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Its handle in the runtime's buffer table (what slices carry).
    pub fn handle(&self) -> BufferHandle {
        self.handle
    }

    /// The runtime this buffer belongs to.
    pub(crate) fn owner(&self) -> &Arc<dyn Owner> {
        &self.shared
    }

    /// Address of element 0 in the backend's memory (a device address on CUDA, a host
    /// address on the CPU backend), for the raw-address tasks that only the `unsafe`
    /// `Batch::submit_unchecked` accepts (`Task::axpy_raw`). Valid while the buffer
    /// lives.
    pub fn raw_address(&self) -> u64 {
        self.mem.as_ref().expect("live until drop").addr()
    }

    /// The whole buffer as a task argument.
    pub fn all(&self) -> Slice<T> {
        Slice::new(self.handle, 0, self.len)
    }

    /// A range of elements as a task argument. Never panics: a range that does not lie
    /// in the buffer (reversed, past its end, or past `u32::MAX`) gives a slice that no
    /// check accepts (offset and length `u32::MAX`), so a task carrying it is refused at
    /// submission with [`crate::Rejection::OutOfRange`]. [`Buffer::try_slice`] says so at
    /// once instead.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Slice<T> {
        self.try_slice(range).unwrap_or(Slice::new(self.handle, u32::MAX, u32::MAX))
    }

    /// A range of elements as a task argument, or [`Error::RangeOutOfBounds`] if it does
    /// not lie in the buffer. Every `RangeBounds` form is taken, bounds saturating at
    /// `usize::MAX` (which no buffer reaches).
    pub fn try_slice(&self, range: impl RangeBounds<usize>) -> Result<Slice<T>> {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.saturating_add(1),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len(),
        };
        if start > end || end > self.len() {
            return Err(Error::RangeOutOfBounds { start, end, len: self.len() });
        }
        // Both fit a u32: `end <= len <= u32::MAX`.
        Ok(Slice::new(self.handle, start as u32, (end - start) as u32))
    }

    /// Copies `data` into the buffer from element `offset`, after every task submitted
    /// before this call (and after the buffer was made) has completed ([`Buffer::read`]
    /// says why). A new buffer's first write waits for nothing.
    pub fn write_at(&self, offset: usize, data: &[T]) -> Result<()> {
        if offset.checked_add(data.len()).is_none_or(|e| e > self.len()) {
            return Err(Error::LengthMismatch { expected: self.len() - offset.min(self.len()), got: data.len() });
        }
        self.shared.settle(self.born, None)?;
        self.copy_in(offset, data)
    }

    /// The copy of `write_at`, with no wait: for a buffer that no task can have named
    /// yet (`Runtime::buffer_from`, before it hands the buffer out), or once the wait
    /// is done. `offset..offset + data.len()` must lie in the buffer.
    pub(crate) fn copy_in(&self, offset: usize, data: &[T]) -> Result<()> {
        let dst = self.mem.as_ref().unwrap().addr() + (offset * size_of::<T>()) as u64;
        // SAFETY: in bounds of this allocation (the caller's check).
        unsafe { self.shared.backend().upload(dst, bytemuck::cast_slice(data), size_of::<T>()) }
    }

    /// Copies `data` (exactly `len()` elements) into the buffer.
    pub fn write(&self, data: &[T]) -> Result<()> {
        if data.len() != self.len() {
            return Err(Error::LengthMismatch { expected: self.len(), got: data.len() });
        }
        self.write_at(0, data)
    }

    /// Copies all of `src` into this buffer (the same length; `src` may belong to
    /// another runtime, on another device), after every task submitted to either
    /// runtime before this call has completed (as [`Buffer::read`] and
    /// [`Buffer::write`] wait). Between two CUDA devices `cuMemcpyPeer` (the driver's
    /// device-to-device copy; direct once peer access is enabled between the devices,
    /// which the runtime does not do itself); otherwise through host memory. Tasks
    /// submitted meanwhile by other threads may race with it, as with `read`.
    pub fn copy_from(&self, src: &Buffer<T>) -> Result<()> {
        if src.len() != self.len() {
            return Err(Error::LengthMismatch { expected: self.len(), got: src.len() });
        }
        src.shared.settle(src.born, None)?;
        self.shared.settle(self.born, None)?;
        match (self.shared.backend().cuda(), src.shared.backend().cuda()) {
            (Some(d), Some(s)) => {
                let (dst, from) = (self.mem.as_ref().unwrap().addr(), src.mem.as_ref().unwrap().addr());
                // SAFETY: both whole allocations of `len` elements, alive for the call.
                unsafe { d.copy_peer(dst, s.context(), from, self.len() * size_of::<T>()) }
            }
            _ => {
                let data = src.read()?;
                self.copy_in(0, &data)
            }
        }
    }

    /// Copies the whole buffer out, after every task submitted before this call (and
    /// after the buffer was made) has completed, as a synchronous CUDA copy waits for
    /// the work before it: what the tasks in flight write is in what it reads. Tasks submitted by other threads
    /// while it copies may still race with it; that gives torn values (on the CPU
    /// backend too: its copies are atomic element by element), never undefined
    /// behaviour. A thread that holds an open [`crate::Reservation`] of this runtime
    /// gets [`Error::ReservationOpen`] (its tasks cannot complete before it is
    /// committed); after a fault, the fault.
    pub fn read(&self) -> Result<Vec<T>> {
        self.shared.settle(self.born, None)?;
        let mut out = vec![T::zeroed(); self.len()];
        let src = self.mem.as_ref().unwrap().addr();
        // SAFETY: `out` is exactly the allocation's size.
        unsafe { self.shared.backend().download(src, bytemuck::cast_slice_mut(&mut out), size_of::<T>()) }?;
        Ok(out)
    }
}

impl<T: Element> Drop for Buffer<T> {
    fn drop(&mut self) {
        // Under the registries' write lock: no producer is between its validation and
        // its reservation (they hold the read lock across both), and a batch checked
        // after its reservation (a large one, a `Reservation`'s tasks) is reserved
        // already, so `next`, read now, covers every task that may name this buffer;
        // later checks refuse it. The
        // memory and the table entry stay for those tasks (host/memory/reclaim.rs): the drop
        // never waits.
        let target = {
            let mut r = self.shared.registries().write();
            r.registry.retire(self.handle);
            self.shared.next_seq()
        };
        self.shared.defer(target, Held::Buffer { index: self.handle.index(), mem: self.mem.take() });
    }
}
