//! Buffer handles: tasks name memory by (handle, offset, length), never by raw pointer.
//! The host registers each buffer in a table that the device reads; both sides check a
//! slice against the table before touching memory.
//!
//! A buffer holds elements of one [`Element`] type, any `Pod` type. Its table entry
//! records the type's [`ElemType`] (which includes the element's size), so a slice is
//! only ever resolved as the type its buffer was made with, or another type of the same
//! kind and size: the bounds of a checked slice are always the buffer's own.

use bytemuck::{Pod, Zeroable};
use core::marker::PhantomData;

/// Capacity of the buffer table: every value of a handle's 16-bit index names an entry,
/// so the device needs no bounds check on the index (the table is 1 MiB).
pub const MAX_BUFFERS: usize = 1 << 16;

/// A registered buffer: index into the table in the low 16 bits, generation in the
/// high 16. A handle whose generation no longer matches its table entry is stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Pod, Zeroable)]
#[repr(transparent)]
pub struct BufferHandle(pub u32);

impl BufferHandle {
    /// The handle of table entry `index` at `generation`.
    pub const fn new(index: u16, generation: u16) -> Self {
        Self(index as u32 | (generation as u32) << 16)
    }
    /// The table entry it names.
    pub const fn index(self) -> usize {
        (self.0 & 0xffff) as usize
    }
    /// The generation it must find there.
    pub const fn generation(self) -> u32 {
        self.0 >> 16
    }
}

/// The type of a buffer's elements as its table entry records it: the element's size in
/// bytes (low 8 bits) and a kind (high 8 bits) that tells apart types of one size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Pod, Zeroable)]
#[repr(transparent)]
pub struct ElemType(pub u16);

impl ElemType {
    /// The type of kind `kind` and `size` bytes (1 to 255).
    pub const fn new(kind: u8, size: usize) -> Self {
        assert!(size > 0 && size < 256, "buffer elements are 1 to 255 bytes");
        Self(size as u16 | (kind as u16) << 8)
    }
    /// `T`'s type code.
    #[inline(always)]
    pub const fn of<T: Element>() -> Self {
        // Evaluated at compile time: no check left for the host's validation pass.
        const { Self::new(T::KIND, size_of::<T>()) }
    }
    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        (self.0 & 0xff) as usize
    }
    /// The kind byte.
    pub const fn kind(self) -> u8 {
        (self.0 >> 8) as u8
    }
    /// `f32`'s code (the built-in tasks use these three).
    pub const F32: Self = Self::of::<f32>();
    /// `u32`'s code.
    pub const U32: Self = Self::of::<u32>();
    /// `i32`'s code.
    pub const I32: Self = Self::of::<i32>();
}

/// Types a buffer may hold: any `Pod` type of 1 to 255 bytes, with a kind byte that
/// tells it apart from other types of its size (a slice of `f32` is never resolved in a
/// buffer of `u32`). Kinds `0..0x80` are the runtime's (the primitive types below);
/// pick yours from `0x80..=0xff`. Two of your types with the same kind and size may be
/// viewed as each other (both are `Pod`, so that is never unsound, only confusing).
///
/// ```
/// use resident_shared::Element;
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Particle { pos: [f32; 3], mass: f32 }
/// impl Element for Particle { const KIND: u8 = 0x80; }
/// ```
pub trait Element: Pod + Send + Sync + 'static {
    /// Distinguishes this type from others of its size (see the trait's docs).
    const KIND: u8;
}

macro_rules! primitive_elements {
    ($($t:ty => $kind:expr),* $(,)?) => { $( impl Element for $t { const KIND: u8 = $kind; } )* };
}
primitive_elements!(f32 => 1, u32 => 2, i32 => 3, f64 => 4, u64 => 5, i64 => 6, u8 => 7, i8 => 8, u16 => 9, i16 => 10);

/// A range of elements of a registered buffer, untyped: what the table check takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct BufSlice {
    /// The buffer.
    pub handle: BufferHandle,
    /// First element.
    pub offset: u32,
    /// Number of elements.
    pub len: u32,
}

/// A range of elements of a buffer of `T`: the form a task's arguments name memory in.
/// Twelve bytes (handle, offset, length); `Pod`, so it goes into task arguments as is.
/// Anyone can build one ([`Slice::new`]); the host checks it against the buffer table
/// before a task carrying it is submitted, and the device checks it again before the
/// task touches memory.
#[repr(C)]
pub struct Slice<T> {
    /// The buffer.
    pub handle: BufferHandle,
    /// First element.
    pub offset: u32,
    /// Number of elements.
    pub len: u32,
    _elem: PhantomData<T>,
}
const _: () = assert!(size_of::<Slice<f64>>() == 12 && align_of::<Slice<f64>>() == 4);

impl<T> Clone for Slice<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Slice<T> {}
impl<T> PartialEq for Slice<T> {
    fn eq(&self, o: &Self) -> bool {
        self.erase() == o.erase()
    }
}
impl<T> Eq for Slice<T> {}
impl<T> core::fmt::Debug for Slice<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Slice").field("handle", &self.handle).field("offset", &self.offset).field("len", &self.len).finish()
    }
}
// SAFETY: `repr(C)` of three `u32`s and a zero-sized marker: no padding, every bit
// pattern valid, whatever `T` is.
unsafe impl<T: 'static> Zeroable for Slice<T> {}
// SAFETY: as above.
unsafe impl<T: 'static> Pod for Slice<T> {}

impl<T> Slice<T> {
    /// Elements `offset .. offset + len` of the buffer `handle` names (unchecked here:
    /// the runtime checks it before use).
    pub const fn new(handle: BufferHandle, offset: u32, len: u32) -> Self {
        Self { handle, offset, len, _elem: PhantomData }
    }
    /// Elements `0 .. len` of the buffer `handle` names.
    pub const fn whole(handle: BufferHandle, len: u32) -> Self {
        Self::new(handle, 0, len)
    }
    /// The untyped form.
    pub const fn erase(self) -> BufSlice {
        BufSlice { handle: self.handle, offset: self.offset, len: self.len }
    }
    /// Elements `start .. start + len` of this slice, if they lie within it.
    pub const fn sub(self, start: u32, len: u32) -> Option<Self> {
        if start as u64 + len as u64 > self.len as u64 {
            return None;
        }
        match self.offset.checked_add(start) {
            Some(offset) => Some(Self::new(self.handle, offset, len)),
            None => None,
        }
    }
    /// The same range with another offset (for tests that forge slices).
    pub const fn with_offset(self, offset: u32) -> Self {
        Self::new(self.handle, offset, self.len)
    }
    /// The same range with another length (for tests that forge slices).
    pub const fn with_len(self, len: u32) -> Self {
        Self::new(self.handle, self.offset, len)
    }
    /// Whether it holds no element.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
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
    /// A free entry: no buffer names it.
    pub const EMPTY: Self = Self { ptr: 0, len: 0, elem: 0, generation: 0 };

    /// `slice`'s handle names this live entry and its element type is `elem`.
    #[inline]
    pub const fn names(&self, slice: BufSlice, elem: ElemType) -> bool {
        self.ptr != 0 && self.generation as u32 == slice.handle.generation() && self.elem == elem.0
    }

    /// `slice` lies within this entry. Overflow-safe: `offset + len` in 64 bits.
    #[inline]
    pub const fn contains(&self, slice: BufSlice) -> bool {
        slice.offset as u64 + slice.len as u64 <= self.len as u64
    }
}
