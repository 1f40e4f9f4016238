//! Buffer handles: tasks name memory by (handle, offset, length), never by raw pointer.
//! The host registers each buffer in a table that the device reads; both sides check a
//! slice against the table before touching memory.

use bytemuck::{Pod, Zeroable};

/// Capacity of the buffer table: handles index it with their low 16 bits.
pub const MAX_BUFFERS: usize = 4096;

/// A registered buffer: index into the table in the low 16 bits, generation in the
/// high 16. A handle whose generation no longer matches its table entry is stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Pod, Zeroable)]
#[repr(transparent)]
pub struct BufferHandle(pub u32);

impl BufferHandle {
    pub const fn new(index: u16, generation: u16) -> Self {
        Self(index as u32 | (generation as u32) << 16)
    }
    pub const fn index(self) -> usize {
        (self.0 & 0xffff) as usize
    }
    pub const fn generation(self) -> u32 {
        self.0 >> 16
    }
}

/// A range of elements of a registered buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct BufSlice {
    pub handle: BufferHandle,
    /// First element.
    pub offset: u32,
    /// Number of elements.
    pub len: u32,
}

/// Element type of a buffer, as recorded in its table entry. Tasks check it, so a
/// `u32` buffer is never read as `f32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum ElemType {
    F32 = 1,
    U32 = 2,
    I32 = 3,
}

/// One entry of the buffer table in device memory. A free entry has `ptr == 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(16))]
pub struct BufferEntry {
    /// Device address of element 0.
    pub ptr: u64,
    /// Number of elements.
    pub len: u32,
    /// An [`ElemType`] code.
    pub elem: u16,
    /// Must equal the generation of any handle that names this entry.
    pub generation: u16,
}
const _: () = assert!(core::mem::size_of::<BufferEntry>() == 16);

impl BufferEntry {
    pub const EMPTY: Self = Self { ptr: 0, len: 0, elem: 0, generation: 0 };

    /// `slice`'s handle names this live entry and its element type is `elem`.
    #[inline]
    pub const fn names(&self, slice: BufSlice, elem: ElemType) -> bool {
        self.ptr != 0 && self.generation as u32 == slice.handle.generation() && self.elem == elem as u16
    }

    /// `slice` lies within this entry. Overflow-safe: `offset + len` in 64 bits.
    #[inline]
    pub const fn contains(&self, slice: BufSlice) -> bool {
        slice.offset as u64 + slice.len as u64 <= self.len as u64
    }
}
