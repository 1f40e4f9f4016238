//! What a task type declares about one task's arguments: the buffer slices it reads,
//! writes or updates atomically, the counters it touches, the task types it may push,
//! and whether its arguments are consistent. The host collects these before a task is
//! submitted and checks each against the live buffers and counters (one generic check
//! for every task type: `host/validate.rs`); the device checks every slice again when
//! the task resolves it (`resident_device::TaskCx::view`).
//!
//! A task that pushes children declares what its children may touch as part of its own
//! declaration (for a tree, the whole slice of its marks), and the children's types
//! with [`Declare::spawns`].

use crate::{BufSlice, CounterId, ElemType, Element, Slice, TaskId};

/// How a task uses a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessMode {
    /// Read only.
    Read,
    /// Written (and maybe read).
    Write,
    /// Read and written by atomic operations only.
    Atomic,
}

/// One item of a task's declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A slice of a buffer of `elem`: it must name a live buffer of that element type
    /// and lie within it.
    Slice {
        /// The elements.
        slice: BufSlice,
        /// Their type (size and kind).
        elem: ElemType,
        /// How the task uses them.
        mode: AccessMode,
    },
    /// A device counter: it must be live.
    Counter(CounterId),
    /// The task may push tasks of this type: it must be in the runtime's set.
    Spawns(TaskId),
    /// The task carries raw addresses or injects faults: only `submit_unchecked`
    /// accepts it.
    Unchecked,
}

/// Why a task's arguments are inconsistent, by its own check (the runtime reports it as
/// a typed rejection; nothing of the batch is submitted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgError {
    /// Two lengths that must agree do not.
    LengthMismatch(u32, u32),
    /// An index lies outside a range of `len`.
    IndexOutOfRange {
        /// The index.
        index: u32,
        /// The length it must be below.
        len: u32,
    },
    /// Any other inconsistency, in words.
    Bad(&'static str),
}

/// The collector a task type's `declare` writes into (the host passes one; the device
/// never calls `declare`).
pub struct Declare<'a> {
    out: Out<'a>,
}

enum Out<'a> {
    Sink(&'a mut dyn FnMut(Access)),
    Collect(&'a mut Collected),
}

/// Items a [`Collected`] holds inline.
pub const COLLECTED: usize = 8;

/// The items of one declaration, kept inline (no call per item): how the runtime
/// collects them when it checks a batch. A declaration of more than [`COLLECTED`]
/// items sets `overflow` (the runtime then declares again with a sink).
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Collected {
    items: [Access; COLLECTED],
    len: usize,
    overflow: bool,
}

impl Default for Collected {
    fn default() -> Self {
        Self::new()
    }
}

impl Collected {
    /// Empty.
    pub const fn new() -> Self {
        Self { items: [Access::Unchecked; COLLECTED], len: 0, overflow: false }
    }
    /// Empties it for the next declaration.
    #[inline(always)]
    pub fn clear(&mut self) {
        self.len = 0;
        self.overflow = false;
    }
    /// The items, in order; `None` if there were more than [`COLLECTED`].
    #[inline(always)]
    pub fn items(&self) -> Option<&[Access]> {
        (!self.overflow).then(|| &self.items[..self.len])
    }
    #[inline(always)]
    fn push(&mut self, a: Access) {
        if self.len < COLLECTED {
            self.items[self.len] = a;
            self.len += 1;
        } else {
            self.overflow = true;
        }
    }
}

impl<'a> Declare<'a> {
    /// A collector that hands every item to `sink`.
    pub fn new(sink: &'a mut dyn FnMut(Access)) -> Self {
        Self { out: Out::Sink(sink) }
    }
    /// A collector that keeps the items in `into` (emptied first).
    #[doc(hidden)]
    #[inline(always)]
    pub fn collect(into: &'a mut Collected) -> Self {
        into.clear();
        Self { out: Out::Collect(into) }
    }
    #[inline(always)]
    fn put(&mut self, a: Access) {
        match &mut self.out {
            Out::Sink(f) => f(a),
            Out::Collect(c) => c.push(a),
        }
    }
    /// The task reads `s`.
    pub fn read<T: Element>(&mut self, s: Slice<T>) {
        self.slice(s, AccessMode::Read)
    }
    /// The task writes `s` (and may read it).
    pub fn write<T: Element>(&mut self, s: Slice<T>) {
        self.slice(s, AccessMode::Write)
    }
    /// The task updates `s` with atomic operations only.
    pub fn atomic<T: Element>(&mut self, s: Slice<T>) {
        self.slice(s, AccessMode::Atomic)
    }
    #[inline(always)]
    fn slice<T: Element>(&mut self, s: Slice<T>, mode: AccessMode) {
        self.put(Access::Slice { slice: s.erase(), elem: ElemType::of::<T>(), mode })
    }
    /// The task waits on or signals counter `c` (beyond its header's own `after` and
    /// `signals`, which the runtime checks anyway).
    pub fn counter(&mut self, c: CounterId) {
        self.put(Access::Counter(c))
    }
    /// The task may push tasks of type `id` (`TaskCx::spawn`).
    pub fn spawns(&mut self, id: TaskId) {
        self.put(Access::Spawns(id))
    }
    /// The task must only be submitted through `submit_unchecked` (written by the
    /// dispatcher for types that say `UNCHECKED`).
    #[doc(hidden)]
    pub fn unchecked(&mut self) {
        self.put(Access::Unchecked)
    }
}
