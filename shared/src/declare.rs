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
    sink: &'a mut dyn FnMut(Access),
}

impl<'a> Declare<'a> {
    /// A collector that hands every item to `sink`.
    pub fn new(sink: &'a mut dyn FnMut(Access)) -> Self {
        Self { sink }
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
    fn slice<T: Element>(&mut self, s: Slice<T>, mode: AccessMode) {
        (self.sink)(Access::Slice { slice: s.erase(), elem: ElemType::of::<T>(), mode })
    }
    /// The task waits on or signals counter `c` (beyond its header's own `after` and
    /// `signals`, which the runtime checks anyway).
    pub fn counter(&mut self, c: CounterId) {
        (self.sink)(Access::Counter(c))
    }
    /// The task may push tasks of type `id` (`TaskCx::spawn`).
    pub fn spawns(&mut self, id: TaskId) {
        (self.sink)(Access::Spawns(id))
    }
    /// The task must only be submitted through `submit_unchecked` (written by the
    /// dispatcher for types that say `UNCHECKED`).
    #[doc(hidden)]
    pub fn unchecked(&mut self) {
        (self.sink)(Access::Unchecked)
    }
}
