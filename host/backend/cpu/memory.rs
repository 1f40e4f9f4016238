//! Zeroed, aligned host allocations standing in for device memory.

use std::alloc::{Layout, alloc_zeroed, dealloc};

/// 256-byte aligned, like `cuMemAlloc`, so that vector paths take the same branches.
#[derive(Debug)]
pub struct HostAlloc {
    ptr: *mut u8,
    layout: Layout,
    /// Never freed: something may still use it (workers that would not stop).
    leaked: bool,
}

// SAFETY: plain memory, shared with worker threads through raw pointers under the
// queue protocol's orderings.
unsafe impl Send for HostAlloc {}
unsafe impl Sync for HostAlloc {}

impl HostAlloc {
    pub fn zeroed(bytes: usize) -> crate::Result<Self> {
        let layout = Layout::from_size_align(bytes.max(1), 256).map_err(|e| crate::Error::Config(e.to_string()))?;
        // SAFETY: non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            // A typed error, not an abort: the size may come from a user (a buffer of
            // the stream API's CPU device).
            return Err(crate::Error::Config(format!("out of host memory: {} bytes could not be allocated", layout.size())));
        }
        crate::util::accounting::count(crate::util::accounting::Kind::Host, layout.size(), true);
        Ok(Self { ptr, layout, leaked: false })
    }
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
    /// Keeps the memory alive past this value's drop.
    pub fn leak(&mut self) {
        self.leaked = true;
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        if !self.leaked {
            // SAFETY: allocated above with this layout.
            unsafe { dealloc(self.ptr, self.layout) }
            crate::util::accounting::count(crate::util::accounting::Kind::Host, self.layout.size(), false);
        }
    }
}
