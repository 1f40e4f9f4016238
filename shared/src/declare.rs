//! What a task type declares about one task's arguments: the buffer slices it reads,
//! writes or updates atomically, the counters it touches, the task types it may push,
//! and whether its arguments are consistent. The host collects these before a task is
//! submitted and checks each against the live buffers and counters (one generic check
//! for every task type: `host/image/validate.rs`); the device checks every slice again when
//! the task resolves it (`resident_device::TaskCx::view`).
//!
//! A task that pushes children declares what its children may touch as part of its own
//! declaration (for a tree, the whole slice of its marks), and the children's types
//! with [`Declare::spawns`].
//!
//! The device holds a running task to its declaration: it collects the same `declare`
//! of the task's arguments before the task runs ([`Collected`]), and each time the task
//! resolves a slice, reads or signals a counter, or pushes a child, it looks the access
//! up there ([`Collected::grant`]) and refuses what the declaration does not grant
//! ([`Grant`]) with `Status::Undeclared`. A task whose `run` is inlined into the
//! persistent loop and views the slices its `declare` names pays nothing for it (the
//! comparisons fold away); one kept out of line scans a few items per lookup.

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

impl AccessMode {
    /// What declaring a slice in this mode grants: reads always, atomic updates for
    /// `Atomic` and `Write`, plain writes for `Write` only.
    #[inline(always)]
    pub const fn grant(self) -> Grant {
        match self {
            Self::Read => Grant::READ,
            Self::Atomic => Grant(Grant::READ.0 | Grant::ATOMIC.0),
            Self::Write => Grant(Grant::READ.0 | Grant::ATOMIC.0 | Grant::WRITE.0),
        }
    }
}

/// What a declaration grants one access: a set of bits. Empty: the declaration does not
/// name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Grant(pub u8);

impl Grant {
    /// Nothing: not declared.
    pub const NONE: Self = Self(0);
    /// The elements may be read.
    pub const READ: Self = Self(1);
    /// The elements may be updated with atomic operations.
    pub const ATOMIC: Self = Self(2);
    /// The elements may be written.
    pub const WRITE: Self = Self(4);
    /// A counter or a pushed task type that the declaration names.
    pub const NAMED: Self = Self(8);
    /// Everything (the warp's own scratch memory; a type whose runs are vouched for).
    pub const ALL: Self = Self(15);

    /// Whether every bit of `other` is granted.
    #[inline(always)]
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
    /// Both grants.
    #[inline(always)]
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
    /// Whether this grant allows `a` as declared: a slice in its mode, a counter or a
    /// pushed type named. (`Unchecked` and `Foreign` are never allowed.)
    #[inline(always)]
    pub const fn allows(self, a: Access) -> bool {
        match a {
            Access::Slice { mode, .. } => self.contains(mode.grant()),
            Access::Counter(_) | Access::Spawns(_) => self.contains(Self::NAMED),
            Access::Unchecked | Access::Foreign => false,
        }
    }
}

/// What item `have` of a declaration grants `want`: for two slices, `have`'s mode if
/// `want` lies within `have` (the same buffer handle, generation included, and the same
/// element type); for two counters or two task types, [`Grant::NAMED`] if they are the
/// same; nothing otherwise. `want`'s own mode plays no part.
#[inline(always)]
pub const fn grants(have: Access, want: Access) -> Grant {
    match (have, want) {
        (Access::Slice { slice: h, elem: he, mode }, Access::Slice { slice: w, elem: we, .. }) => {
            // In u64: no offset + len overflows.
            let inside = h.handle.0 == w.handle.0
                && he.0 == we.0
                && h.offset as u64 <= w.offset as u64
                && w.offset as u64 + w.len as u64 <= h.offset as u64 + h.len as u64;
            if inside { mode.grant() } else { Grant::NONE }
        }
        (Access::Counter(h), Access::Counter(w)) if h.index == w.index && h.generation == w.generation => Grant::NAMED,
        (Access::Spawns(h), Access::Spawns(w)) if h.0 == w.0 => Grant::NAMED,
        _ => Grant::NONE,
    }
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
    /// The task carries raw addresses or injects faults: only `Batch::submit_unchecked`
    /// accepts it.
    Unchecked,
    /// The task's record was built by another type than the one the set holds at its
    /// id (its tag, [`crate::type_tag`], differs): refused (written by the dispatcher).
    Foreign,
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

/// The collector a task type's `declare` writes into: the host's check passes one, and
/// the device another before each run, to hold the run to what it collects.
pub struct Declare<'a> {
    out: Out<'a>,
}

enum Out<'a> {
    Sink(&'a mut dyn FnMut(Access)),
    Collect(&'a mut Collected),
}

/// Most items one declaration may have: slices, counters and pushed types together. The
/// host refuses a task that declares more (`Rejection::DeclarationTooLong`), since the
/// device holds a running task to its declaration collected into this many items.
pub const COLLECTED: usize = 12;

/// The items of one declaration, kept inline (no call per item, no allocation): how the
/// host collects them when it checks a batch, and how the device keeps a running
/// task's declaration to look its accesses up in ([`Collected::grant`]). A declaration
/// of more than [`COLLECTED`] items sets `overflow`.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Collected {
    /// `items[..len]` are written; the rest is never read (no initialization of
    /// unused items for each task).
    items: [core::mem::MaybeUninit<Access>; COLLECTED],
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
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Self { items: [const { core::mem::MaybeUninit::uninit() }; COLLECTED], len: 0, overflow: false }
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
        // SAFETY: `items[..len]` were written by `push` (`len <= COLLECTED`), and
        // `MaybeUninit<Access>` has `Access`'s layout.
        (!self.overflow).then(|| unsafe { core::slice::from_raw_parts(self.items.as_ptr() as *const Access, self.len) })
    }
    #[inline(always)]
    fn push(&mut self, a: Access) {
        if self.len < COLLECTED {
            self.items[self.len] = core::mem::MaybeUninit::new(a);
            self.len += 1;
        } else {
            self.overflow = true;
        }
    }
    /// What the declaration grants `want`: the union over its items ([`grants`]);
    /// nothing if it overflowed (the host refuses such a task before it runs).
    #[inline(always)]
    pub fn grant(&self, want: Access) -> Grant {
        let mut g = Grant::NONE;
        if let Some(items) = self.items() {
            for have in items {
                g = g.union(grants(*have, want));
            }
        }
        g
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
    #[inline(always)]
    pub fn read<T: Element>(&mut self, s: Slice<T>) {
        self.slice(s, AccessMode::Read)
    }
    /// The task writes `s` (and may read it).
    #[inline(always)]
    pub fn write<T: Element>(&mut self, s: Slice<T>) {
        self.slice(s, AccessMode::Write)
    }
    /// The task updates `s` with atomic operations only.
    #[inline(always)]
    pub fn atomic<T: Element>(&mut self, s: Slice<T>) {
        self.slice(s, AccessMode::Atomic)
    }
    #[inline(always)]
    fn slice<T: Element>(&mut self, s: Slice<T>, mode: AccessMode) {
        self.put(Access::Slice { slice: s.erase(), elem: ElemType::of::<T>(), mode })
    }
    /// The task waits on or signals counter `c` (beyond its header's own `after` and
    /// `signals`, which the runtime checks anyway).
    #[inline(always)]
    pub fn counter(&mut self, c: CounterId) {
        self.put(Access::Counter(c))
    }
    /// The task may push tasks of type `id` (`TaskCx::spawn`).
    #[inline(always)]
    pub fn spawns(&mut self, id: TaskId) {
        self.put(Access::Spawns(id))
    }
    /// The task must only be submitted through `Batch::submit_unchecked` (written by the
    /// dispatcher for types that say `UNCHECKED`).
    #[doc(hidden)]
    #[inline(always)]
    pub fn unchecked(&mut self) {
        self.put(Access::Unchecked)
    }
    /// The task's record was built by another type (written by the dispatcher).
    #[doc(hidden)]
    #[inline(always)]
    pub fn foreign(&mut self) {
        self.put(Access::Foreign)
    }
}
