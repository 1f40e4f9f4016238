//! The buffer arena (`RuntimeConfig::buffer_arena`, off by default): one device
//! allocation made before the persistent kernel starts, from which buffers are carved.
//!
//! Why: compute-sanitizer's memcheck checks each kernel's accesses against the
//! allocations that existed when that kernel was launched. A resident kernel outlives
//! every buffer made after its launch, so memcheck reports each of its accesses to
//! them as out of bounds, whichever allocator made them (stream-ordered and virtual
//! memory alike, H200 and H100, 2026-11-23). Carved from an arena, buffers lie inside
//! an allocation memcheck knows. Its bounds are then the arena's, not the buffer's:
//! the runtime's own checks (every task's buffer handles, on the host and again on
//! the device) hold each task to its buffer.
//!
//! First fit over a free list ordered by offset, neighbours merged on release; blocks
//! aligned to 256 bytes (what `cuMemAlloc` guarantees).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::memory::DeviceAlloc;
use crate::driver::context::Context;
use crate::{Error, Result};

const ALIGN: u64 = 256;

#[derive(Debug)]
pub(crate) struct Arena {
    mem: DeviceAlloc,
    free: Mutex<FreeList>,
}

/// Free ranges of the arena: offset -> length, neighbours always merged.
#[derive(Debug)]
struct FreeList(BTreeMap<u64, u64>);

impl FreeList {
    fn new(bytes: u64) -> Self {
        Self(BTreeMap::from([(0, bytes)]))
    }

    /// First fit: the offset of `len` bytes (a multiple of `ALIGN`), if a range holds them.
    fn take(&mut self, len: u64) -> Option<u64> {
        let (&offset, &have) = self.0.iter().find(|(_, l)| **l >= len)?;
        self.0.remove(&offset);
        if have > len {
            self.0.insert(offset + len, have - len);
        }
        Some(offset)
    }

    fn give_back(&mut self, mut offset: u64, mut len: u64) {
        if let Some((&o, &l)) = self.0.range(..offset).next_back()
            && o + l == offset
        {
            self.0.remove(&o);
            offset = o;
            len += l;
        }
        if let Some(l) = self.0.remove(&(offset + len)) {
            len += l;
        }
        self.0.insert(offset, len);
    }
}

/// A block of the arena, returned to it on drop.
#[derive(Debug)]
pub(crate) struct ArenaBlock {
    arena: Arc<Arena>,
    offset: u64,
    len: u64,
}

impl Arena {
    /// Allocates the arena. Before the persistent kernel starts (plain `cuMemAlloc`).
    ///
    /// # Safety
    /// Nothing may be resident on the device that a synchronous memset would wait for.
    pub unsafe fn new(ctx: &Context, bytes: usize) -> Result<Arc<Self>> {
        let bytes = (bytes as u64).div_ceil(ALIGN) * ALIGN;
        let mem = unsafe { DeviceAlloc::zeroed_sync(ctx, bytes as usize) }?;
        Ok(Arc::new(Self { mem, free: Mutex::new(FreeList::new(bytes)) }))
    }

    /// A block of `bytes` (at least one), or `ArenaFull` if no free range holds it.
    pub fn take(self: &Arc<Self>, bytes: usize) -> Result<ArenaBlock> {
        let len = (bytes.max(1) as u64).div_ceil(ALIGN) * ALIGN;
        let offset = self.free.lock().unwrap().take(len).ok_or(Error::ArenaFull(bytes))?;
        Ok(ArenaBlock { arena: self.clone(), offset, len })
    }
}

impl ArenaBlock {
    pub fn ptr(&self) -> u64 {
        self.arena.mem.ptr() + self.offset
    }
}

impl Drop for ArenaBlock {
    fn drop(&mut self) {
        self.arena.free.lock().unwrap().give_back(self.offset, self.len);
    }
}

#[cfg(test)]
mod tests {
    use super::FreeList;

    #[test]
    fn free_list_first_fit_and_merge() {
        let mut f = FreeList::new(1024);
        let a = f.take(256).unwrap();
        let b = f.take(512).unwrap();
        let c = f.take(256).unwrap();
        assert_eq!((a, b, c), (0, 256, 768));
        assert_eq!(f.take(256), None, "full");
        f.give_back(b, 512);
        assert_eq!(f.take(768), None, "only 512 free in one piece");
        f.give_back(a, 256);
        f.give_back(c, 256);
        assert_eq!(f.0.len(), 1, "all three merged back: {:?}", f.0);
        assert_eq!(f.take(1024), Some(0));
    }
}
