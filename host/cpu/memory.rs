//! Zeroed, aligned host allocations standing in for device memory.

use std::alloc::{Layout, alloc_zeroed, dealloc};

/// 256-byte aligned, like `cuMemAlloc`, so that vector paths take the same branches.
#[derive(Debug)]
pub struct HostAlloc {
    ptr: *mut u8,
    layout: Layout,
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
            std::alloc::handle_alloc_error(layout);
        }
        Ok(Self { ptr, layout })
    }
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        // SAFETY: allocated above with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}
