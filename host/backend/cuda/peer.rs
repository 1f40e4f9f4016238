//! Peer links on CUDA (host/multi/peer_link.rs has the link itself): inboxes in the receiving
//! device's memory, their inbound-table entries, and peer access between contexts.
//! The device side is `resident_device::inbox` (the relay warp pops) and
//! `resident_device::link` (the pushing warps).

use cudarc::driver::sys::{self, CUresult};
use resident_shared::link::{INBOUND_OFFSET, InboundEntry, InboxHeader, MAX_INBOUND, inbox_bytes};
use std::sync::{Arc, Mutex};

use super::backend::CudaBackend;
use crate::driver::context::{Context, check};
use crate::driver::memory::PinnedAlloc;
use crate::driver::stream::Stream;
use crate::{Error, Result};

/// An inbox: device memory of the receiving device, from a memory pool of its own that
/// grants the pushing device access (stream-ordered allocations are reachable from a
/// peer only through their pool's access list, `cuMemPoolSetAccess`, not through
/// `cuCtxEnablePeerAccess`: an inbox from the default pool faulted the pusher with an
/// illegal address, 2 x H200, 2026-11-26), and a stream of its own for the
/// stream-ordered free (a `cuMemFree` would wait for the device's resident kernel; a
/// free on a non-blocking stream does not). Held by the receiving backend (its relay
/// reads it) and by the pushing one (its warps may still write it after a close): the
/// last of the two frees it.
pub struct Inbox {
    ptr: sys::CUdeviceptr,
    pool: sys::CUmemoryPool,
    stream: Stream,
    capacity: u32,
    /// The relay's copy of `done` for the host (`resident_device::inbox`, I5).
    mirror: PinnedAlloc,
}

// SAFETY: driver handles and a device address; the driver's calls on them are
// thread-safe, and the only mutation (the free) is in `drop`.
unsafe impl Send for Inbox {}
unsafe impl Sync for Inbox {}

impl Drop for Inbox {
    fn drop(&mut self) {
        let _ = self.stream.context().bind();
        // SAFETY: owned here; no kernel can touch it any more (both runtimes that could
        // have dropped their holds after their kernels stopped); freed in stream order,
        // then the pool (empty) goes.
        unsafe {
            sys::cuMemFreeAsync(self.ptr, self.stream.raw());
            sys::cuStreamSynchronize(self.stream.raw());
            sys::cuMemPoolDestroy(self.pool);
        }
        crate::util::accounting::count(crate::util::accounting::Kind::Device, inbox_bytes(self.capacity), false);
    }
}

impl Inbox {
    pub fn addr(&self) -> u64 {
        self.ptr
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// (`done`, `failed`) as the relay copied them last (I5): host memory loads, no
    /// driver call.
    pub fn done(&self) -> (u64, u64) {
        use std::sync::atomic::{AtomicU64, Ordering};
        let words = self.mirror.host_ptr() as *const AtomicU64;
        // SAFETY: the mirror is 16 aligned bytes of live mapped pinned memory, written by
        // the device only with 8-byte stores. Acquire of `done` pairs with the relay's
        // st.release.sys, which it made after storing `failed`.
        unsafe { ((*words).load(Ordering::Acquire), (*words.add(1)).load(Ordering::Relaxed)) }
    }

    /// Marks the inbox closed through `backend` (its owner): pushes waiting for room,
    /// or about to take a position, fail with `BadLink`.
    pub fn close(&self, backend: &CudaBackend) -> Result<()> {
        let word = self.addr() + std::mem::offset_of!(InboxHeader, closed) as u64;
        // SAFETY: 4 bytes of this live inbox.
        unsafe { backend.upload(word, &1u32.to_ne_bytes(), 4) }
    }
}

/// Whether device `a` can access device `b`'s memory (`cuDeviceCanAccessPeer`).
pub fn can_access(a: &Context, b: &Context) -> Result<bool> {
    let (mut da, mut db, mut ok) = (0, 0, 0);
    // SAFETY: the driver writes one handle each, then one int.
    unsafe {
        check(sys::cuDeviceGet(&mut da, a.ordinal() as i32), "cuDeviceGet")?;
        check(sys::cuDeviceGet(&mut db, b.ordinal() as i32), "cuDeviceGet")?;
        check(sys::cuDeviceCanAccessPeer(&mut ok, da, db), "cuDeviceCanAccessPeer")?;
    }
    Ok(ok != 0)
}

/// Lets kernels of `from`'s context access memory of `to`'s (once per pair and
/// direction; already enabled is fine).
pub fn enable_access(from: &Context, to: &Context) -> Result<()> {
    from.bind()?;
    // SAFETY: two live primary contexts; flags must be 0.
    match unsafe { sys::cuCtxEnablePeerAccess(to.raw(), 0) } {
        CUresult::CUDA_SUCCESS | CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(()),
        r => check(r, "cuCtxEnablePeerAccess"),
    }
}

impl CudaBackend {
    /// A new inbox of `capacity` slots (zeroed), and its entry in the inbound table,
    /// live (the relay drains it from its next poll). `TooManyLinks` after
    /// `MAX_INBOUND` over the runtime's life: an entry is never reused.
    /// `pusher`: the ordinal of the device whose warps push into it.
    pub fn new_inbox(&self, capacity: u32, pusher: usize) -> Result<(usize, Arc<Inbox>)> {
        let mut v = self.peer_state().inboxes.lock().unwrap_or_else(|e| e.into_inner());
        if v.len() >= MAX_INBOUND {
            return Err(Error::TooManyLinks(MAX_INBOUND));
        }
        let ctx = self.context();
        ctx.bind()?;
        let stream = Stream::non_blocking(ctx, 0)?;
        // SAFETY: fresh memory; only the relay writes it (I5).
        let mirror = unsafe { PinnedAlloc::zeroed(ctx, 128, false) }?;
        let device = |id: usize| sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: id as i32 };
        // SAFETY: plain old data; the fields the driver reads are set below.
        let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
        props.location = device(ctx.ordinal());
        let mut pool = std::ptr::null_mut();
        // SAFETY: valid properties; the driver writes one handle.
        check(unsafe { sys::cuMemPoolCreate(&mut pool, &props) }, "cuMemPoolCreate")?;
        let access = sys::CUmemAccessDesc { location: device(pusher), flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
        let bytes = inbox_bytes(capacity);
        let mut ptr = 0;
        // SAFETY: a live pool and stream of this context; the allocation is zeroed and
        // waited for before anyone sees its address.
        let made = unsafe {
            check(sys::cuMemPoolSetAccess(pool, &access, 1), "cuMemPoolSetAccess")
                .and_then(|()| check(sys::cuMemAllocFromPoolAsync(&mut ptr, bytes, pool, stream.raw()), "cuMemAllocFromPoolAsync"))
                .and_then(|()| check(sys::cuMemsetD8Async(ptr, 0, bytes, stream.raw()), "cuMemsetD8Async"))
                .and_then(|()| check(sys::cuStreamSynchronize(stream.raw()), "cuStreamSynchronize"))
        };
        if let Err(e) = made {
            // SAFETY: what was made above, unused by anyone.
            unsafe {
                if ptr != 0 {
                    sys::cuMemFreeAsync(ptr, stream.raw());
                    sys::cuStreamSynchronize(stream.raw());
                }
                sys::cuMemPoolDestroy(pool);
            }
            return Err(e);
        }
        crate::util::accounting::count(crate::util::accounting::Kind::Device, bytes, true);
        let word = ptr + std::mem::offset_of!(InboxHeader, mirror) as u64;
        let inbox = Arc::new(Inbox { ptr, pool, stream, capacity, mirror });
        // Before the entry goes live (I1), so the relay's first look sees it.
        // SAFETY: 8 bytes of the live inbox.
        unsafe { self.upload(word, &inbox.mirror.device_ptr().to_ne_bytes(), 8) }?;
        let index = v.len();
        self.set_inbound(index, InboundEntry { inbox: inbox.addr(), mask: capacity - 1, live: 1 })?;
        v.push(inbox.clone());
        Ok((index, inbox))
    }

    /// Writes inbound entry `index` (a synchronous copy: it has landed when this
    /// returns; `resident_device::inbox`, I1).
    pub fn set_inbound(&self, index: usize, e: InboundEntry) -> Result<()> {
        assert!(index < MAX_INBOUND);
        let dst = self.table_ptr() + (INBOUND_OFFSET + index * size_of::<InboundEntry>()) as u64;
        // SAFETY: 16 bytes of the live table allocation.
        unsafe { self.upload(dst, bytemuck::bytes_of(&e), 8) }
    }

    /// Marks every inbox of this runtime closed (at shutdown): pushes that wait for
    /// room fail with `BadLink` instead of waiting for a relay that has left.
    pub fn close_inboxes(&self) {
        let v = self.peer_state().inboxes.lock().unwrap_or_else(|e| e.into_inner());
        for inbox in v.iter() {
            let _ = inbox.close(self);
        }
    }

    /// An inbox's exact counts (`done`, `failed`): a synchronous device read, for when
    /// the relay may have left before it copied them (I5).
    pub fn inbox_counts(&self, inbox: &Inbox) -> Result<(u64, u64)> {
        let mut w = [0u8; 16];
        // SAFETY: 16 bytes of a live inbox (held by the caller).
        unsafe { self.download(inbox.addr() + std::mem::offset_of!(InboxHeader, done) as u64, &mut w, 8) }?;
        let (d, f) = w.split_at(8);
        Ok((u64::from_ne_bytes(d.try_into().expect("8 bytes")), u64::from_ne_bytes(f.try_into().expect("8 bytes"))))
    }

    /// Whether no task pushed into this runtime through a peer link can be running: no
    /// peer link into it is open (so its relay moves no more tasks out of the inboxes),
    /// and in every inbox, `done` (read first) has counted every position the relay
    /// moved (`dequeue`, read after it: `done` only grows and never passes `dequeue`,
    /// so equal values mean none was in flight at the second read). What the reclaim
    /// waits for before it frees a dropped buffer's memory: peer tasks are checked by no
    /// host of this runtime and counted in no ticket of it. A failed read says no.
    pub fn peer_tasks_quiet(&self) -> bool {
        if self.relay().peers() != 0 {
            return false;
        }
        let v = self.peer_state().inboxes.lock().unwrap_or_else(|e| e.into_inner());
        v.iter().all(|inbox| {
            let Ok((done, _)) = self.inbox_counts(inbox) else { return false };
            let mut w = [0u8; 4];
            // SAFETY: 4 bytes of a live inbox (held in `inboxes`).
            let dequeue = unsafe { self.download(inbox.addr() + std::mem::offset_of!(InboxHeader, dequeue) as u64, &mut w, 4) };
            dequeue.is_ok() && u32::from_ne_bytes(w) == done as u32
        })
    }

    /// One more (`+1`) or one fewer (`-1`) open peer link into this runtime: its relay
    /// looks at inboxes only while there are any.
    pub fn add_peers(&self, delta: i64) {
        self.relay().add_peers(delta);
    }

    /// Keeps `inbox` (another device's) alive as long as this backend: this runtime's
    /// warps push into it, and one that read a link's entry before its close may still
    /// be writing.
    pub fn keep_inbox(&self, inbox: Arc<Inbox>) {
        self.peer_state().kept.lock().unwrap_or_else(|e| e.into_inner()).push(inbox);
    }
}

/// A backend's holdings: the inboxes it drains (in inbound-table order) and those of
/// other devices that its warps push into.
#[derive(Default)]
pub struct PeerState {
    inboxes: Mutex<Vec<Arc<Inbox>>>,
    kept: Mutex<Vec<Arc<Inbox>>>,
}
