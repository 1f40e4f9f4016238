//! The task record: what the host (or a running task) writes into the queue and a
//! worker reads back, 64 bytes, one per slot: a 16-byte header and 48 bytes of
//! arguments, whose layout is the task type's own `Pod` struct. Runs of a large batch
//! over the host ring may go in a 32-byte form instead ([`CompactTask`]), which the
//! worker widens back before the task runs.

use bytemuck::{Pod, Zeroable};

/// Number of 32-bit argument words in a [`Task`].
pub const TASK_ARGS: usize = 12;

/// Largest argument struct a task type may have, in bytes; its alignment may be at most
/// 16. Both are checked at compile time wherever a task's arguments are built or read
/// ([`Task::with_args`], [`Task::args_as`]).
pub const TASK_ARG_BYTES: usize = TASK_ARGS * 4;

/// Most tasks of a resident list that one queue slot stands for ([`Task::list_chunk`]):
/// a warp runs them one after another, so a chunk may take one lane's prefetch each.
pub const MAX_LIST_CHUNK: u32 = 32;

/// Which function a task runs: unique within a task set (checked at compile time when
/// the set is declared). Zero is never an id (a zeroed or poisoned slot never decodes
/// as a task), and `0xff00..=0xffff` belong to the runtime. The built-in tasks use
/// `1..=63` ([`crate::builtin`]); a set that includes them should number its own from
/// [`TaskId::FIRST_USER`] up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Pod, Zeroable)]
#[repr(transparent)]
pub struct TaskId(pub u16);

impl TaskId {
    /// The first id past the built-in tasks' range.
    pub const FIRST_USER: TaskId = TaskId(0x100);
    /// The terminate sentinel (the runtime's own; never in a set).
    pub const TERMINATE: TaskId = TaskId(0xffff);
    /// A chunk of a resident task list (the runtime's own; never in a set): one queue
    /// slot that stands for up to [`MAX_LIST_CHUNK`] consecutive tasks of the list,
    /// run one after another by the warp that claims it ([`Task::list_chunk`]).
    pub const LIST_CHUNK: TaskId = TaskId(0xfffe);

    /// Whether a task set may use this id: not zero, not the runtime's `0xff00..`.
    pub const fn is_assignable(self) -> bool {
        self.0 != 0 && self.0 < 0xff00
    }
}

/// One task: a 16-byte header and twelve argument words whose meaning depends on the
/// task type. Built from a task type's argument struct (`DeviceTask::task` in
/// `resident-device`, or [`Task::with_args`]) rather than by hand.
///
/// Header words, and who writes them:
/// - `opcode` (user): the [`TaskId`] of the task type;
/// - `flags` (the runtime, at submission; before it, the tag of the type that built the
///   record, [`type_tag`], written by [`Task::with_args`], or zero for a record built
///   by hand: the host refuses a record whose tag is not that of its set's type of the
///   same id);
/// - `seg` (the runtime, at submission; before it, the generations of the counters
///   the header names, low half `wait_counter`'s, high half `signal_counter`'s, which
///   the host checks: zero where no counter is named);
/// - `wait_counter`, `wait_value`, `signal_counter` (user, through [`Task::after`] and
///   [`Task::signals`]): device-side dependencies, resolved without the host. Counter 0
///   means none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(16))]
pub struct Task {
    /// The task type's [`TaskId`], raw.
    pub opcode: u16,
    /// [`task_flags`] bits, set by the runtime; before submission, the building type's
    /// [`type_tag`] (or zero).
    pub flags: u16,
    /// Where this task's completion is counted: see [`crate::segment`]. Set by the
    /// runtime.
    pub seg: u32,
    /// The task runs only once `counters[wait_counter] >= wait_value` (0: no wait).
    pub wait_counter: u16,
    /// After the task ran (and its writes are visible at GPU scope), one is added to
    /// `counters[signal_counter]` (0: no signal).
    pub signal_counter: u16,
    /// The value `wait_counter` must reach (see `after`).
    pub wait_value: u32,
    /// The task type's argument struct, in 48 bytes ([`Task::args_as`]).
    pub args: [u32; TASK_ARGS],
}
const _: () = assert!(core::mem::size_of::<Task>() == 64);
const _: () = assert!(core::mem::align_of::<Task>() == 16);
const _: () = assert!(core::mem::offset_of!(Task, seg) == 4);
const _: () = assert!(core::mem::offset_of!(Task, wait_counter) == 8);
const _: () = assert!(core::mem::offset_of!(Task, wait_value) == 12);
const _: () = assert!(core::mem::offset_of!(Task, args) == 16);

/// The tag of type `T` that a task record built by [`Task::with_args`] carries in its
/// `flags` until submission: 16 bits of `T`'s `TypeId`, never zero. The host compares
/// it with the tag of the type its runtime's set holds at the record's id, so a task of
/// a type that is not in the set is refused whatever its id (two distinct types share a
/// tag with a probability of 2^-16; a record with tag zero, built by hand with
/// [`Task::raw`], is taken as the set's type). The same within one compiled program (on
/// the GPU, within one kernel image, whose `TypeId`s are its own): a child a task pushes
/// carries its type's tag too, which the device compares with the set's type of its id
/// before it runs the child. A constant after inlining (the hash of a constant).
#[inline]
pub fn type_tag<T: 'static>() -> u16 {
    {
        use core::hash::{Hash, Hasher};
        /// FNV-1a, 64 bits.
        struct Fnv(u64);
        impl Hasher for Fnv {
            fn finish(&self) -> u64 {
                self.0
            }
            fn write(&mut self, bytes: &[u8]) {
                for b in bytes {
                    self.0 = (self.0 ^ *b as u64).wrapping_mul(0x0000_0100_0000_01b3);
                }
            }
        }
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        core::any::TypeId::of::<T>().hash(&mut h);
        let h = h.finish();
        match (h ^ h >> 16 ^ h >> 32 ^ h >> 48) as u16 {
            0 => 1,
            t => t,
        }
    }
}

/// Argument words a [`CompactTask`] carries: the first six of a [`Task`]'s twelve.
pub const COMPACT_ARGS: usize = 6;

/// A task in 32 bytes: the header's `opcode`, `flags` and `seg`, and the first
/// [`COMPACT_ARGS`] argument words. It stands for the [`Task`] with those words whose
/// counters (`wait_counter`, `signal_counter`, `wait_value`) and remaining argument
/// words are zero ([`Task::compact`], [`CompactTask::widen`]): a noop, a mark, a spin,
/// any task type whose arguments fit 24 bytes and that waits on and signals no
/// counter. The host writes a large batch's tasks in this form into the host ring when
/// every task of a run has it (half the bytes to write, and for the workers to read
/// over PCIe); a worker widens each back into a `Task` before it runs it, so no task
/// type sees the difference (device/src/worker.rs, `copy_compact`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(16))]
pub struct CompactTask {
    /// As [`Task::opcode`].
    pub opcode: u16,
    /// As [`Task::flags`].
    pub flags: u16,
    /// As [`Task::seg`].
    pub seg: u32,
    /// [`Task::args`]`[..COMPACT_ARGS]`.
    pub args: [u32; COMPACT_ARGS],
}
const _: () = assert!(core::mem::size_of::<CompactTask>() == 32);
const _: () = assert!(core::mem::offset_of!(CompactTask, args) == 8);

impl CompactTask {
    /// The task this stands for: the counters and the remaining argument words zero.
    #[inline(always)]
    pub const fn widen(&self) -> Task {
        let mut args = [0u32; TASK_ARGS];
        let mut i = 0;
        while i < COMPACT_ARGS {
            args[i] = self.args[i];
            i += 1;
        }
        Task { opcode: self.opcode, flags: self.flags, seg: self.seg, wait_counter: 0, signal_counter: 0, wait_value: 0, args }
    }
}

/// Bits of [`Task::flags`]. All belong to the runtime.
pub mod task_flags {
    /// Write this task's completion record (status and inline result) even if it
    /// succeeds: its ticket wants results.
    pub const RESULT: u16 = 1;
    /// A task pushed by another task on the device: [`crate::Task::seg`] names its
    /// parent's segment absolutely (see [`crate::segment::child`]).
    pub const CHILD: u16 = 2;
    /// A lone task (a batch of one) whose ticket resolves from its own completion
    /// record: whoever runs it writes the record with a system-scope release (not only
    /// on failure), and the host's ticket is done when it sees it, before the segment's
    /// record. Set by the runtime only on tasks whose type declares no children (a
    /// ticket resolved by the task's own record must not leave any behind). The relay
    /// warp may run such a task itself (`device/src/relay.rs`); docs/protocol.md has
    /// the handshake.
    pub const EXPRESS: u16 = 4;
    /// Set by the relay warp in the ring copy of an express task it has already run:
    /// the worker that claims the slot only counts it in its segment (no run, no record,
    /// no signal).
    pub const RELAYED: u16 = 8;
    /// A task that another runtime's task pushed through a peer link, moved from its
    /// inbox into the spawn ring by the relay warp (always with [`CHILD`]). It belongs
    /// to no segment: `seg` (low half) and `wait_value` (high half) hold the address of
    /// its inbox's `done` word ([`crate::link::InboxHeader`]), which its completion adds
    /// to. It may not push children of its own (`Status::QueueFull`).
    pub const PEER: u16 = 16;
}

impl Task {
    /// A task with a raw opcode and argument words. The runtime validates it at submit
    /// time; the device validates it again before running it.
    pub const fn raw(opcode: u16, args: [u32; TASK_ARGS]) -> Self {
        Self { opcode, flags: 0, seg: 0, wait_counter: 0, signal_counter: 0, wait_value: 0, args }
    }

    /// A task of type `id` with `args` as its arguments (the rest zero), tagged as built
    /// by `A` (`flags` holds [`type_tag`]`::<A>()` until submission): `A` is the task
    /// type's argument struct, and a runtime whose set holds another type at `id`
    /// refuses the task rather than run it as that type. `A` must fit
    /// [`TASK_ARG_BYTES`] with an alignment of at most 16: a compile-time error
    /// otherwise.
    #[inline]
    pub fn with_args<A: Pod>(id: TaskId, args: &A) -> Self {
        const { assert!(size_of::<A>() <= TASK_ARG_BYTES && align_of::<A>() <= 16, "task arguments: at most 48 bytes, aligned to at most 16") };
        let mut t = Self::raw(id.0, [0; TASK_ARGS]);
        bytemuck::bytes_of_mut(&mut t.args)[..size_of::<A>()].copy_from_slice(bytemuck::bytes_of(args));
        t.flags = type_tag::<A>();
        t
    }

    /// The arguments read as `A`, in place (on the device: straight from the ring slot;
    /// a task reads only the fields it uses). Same compile-time bounds as
    /// [`Task::with_args`].
    #[inline(always)]
    pub fn args_as<A: Pod>(&self) -> &A {
        const { assert!(size_of::<A>() <= TASK_ARG_BYTES && align_of::<A>() <= 16, "task arguments: at most 48 bytes, aligned to at most 16") };
        // SAFETY: `args` is 48 bytes at offset 16 of a 16-byte aligned struct, so it
        // holds `A` (at most 48 bytes) at an alignment of at least `align_of::<A>()`
        // (at most 16); `A` is `Pod`, so any bytes are a valid `A`. The borrow of `self`
        // covers the reference's life.
        unsafe { &*(self.args.as_ptr() as *const A) }
    }

    /// The task type's id.
    #[inline(always)]
    pub const fn id(&self) -> TaskId {
        TaskId(self.opcode)
    }

    /// This task waits until device counter `counter` reaches `value` (a value that
    /// counts signals: the counter only grows). The counter's generation goes into the
    /// low half of `seg`, which the host checks and then overwrites at submission.
    pub const fn after(mut self, counter: crate::CounterId, value: u32) -> Self {
        self.wait_counter = counter.index;
        self.wait_value = value;
        self.seg = (self.seg & 0xffff_0000) | counter.generation as u32;
        self
    }

    /// This task adds one to device counter `counter` once it has run. The counter's
    /// generation goes into the high half of `seg` (see [`Task::after`]).
    pub const fn signals(mut self, counter: crate::CounterId) -> Self {
        self.signal_counter = counter.index;
        self.seg = (self.seg & 0xffff) | (counter.generation as u32) << 16;
        self
    }

    /// The counters the header names, with the generations `after` and `signals` put
    /// into `seg` (meaningful before submission only: the runtime then overwrites
    /// `seg`).
    pub const fn header_counters(&self) -> (crate::CounterId, crate::CounterId) {
        (crate::CounterId::new(self.wait_counter, self.seg as u16), crate::CounterId::new(self.signal_counter, (self.seg >> 16) as u16))
    }

    /// This task in 32 bytes, if it has that form: no counter named and its argument
    /// words past [`COMPACT_ARGS`] zero ([`CompactTask`]).
    #[inline(always)]
    pub fn compact(&self) -> Option<CompactTask> {
        let rest = self.args[COMPACT_ARGS..].iter().fold(0, |a, &w| a | w);
        if self.wait_counter | self.signal_counter != 0 || self.wait_value | rest != 0 {
            return None;
        }
        let mut args = [0u32; COMPACT_ARGS];
        args.copy_from_slice(&self.args[..COMPACT_ARGS]);
        Some(CompactTask { opcode: self.opcode, flags: self.flags, seg: self.seg, args })
    }

    /// The terminate sentinel (runtime use).
    pub const fn terminate() -> Self {
        Self::raw(TaskId::TERMINATE.0, [0; TASK_ARGS])
    }

    /// A chunk of a resident list (runtime use): the `count` tasks at device address
    /// `addr` (at most [`MAX_LIST_CHUNK`]), which wait on no counter. The workers honour
    /// it only when they read it from a resident list in device memory; the host
    /// refuses it in any submission ([`TaskId::LIST_CHUNK`]).
    pub const fn list_chunk(addr: u64, count: u32) -> Self {
        let mut args = [0; TASK_ARGS];
        args[0] = addr as u32;
        args[1] = (addr >> 32) as u32;
        args[2] = count;
        Self::raw(TaskId::LIST_CHUNK.0, args)
    }

    /// The tasks a [`Task::list_chunk`] stands for: their address and number.
    #[inline(always)]
    pub const fn chunk_span(&self) -> (u64, u32) {
        (self.args[0] as u64 | (self.args[1] as u64) << 32, self.args[2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CounterId;

    #[test]
    fn compact_widens_back_to_the_same_task() {
        let mut t = Task::raw(7, [1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0]);
        t.flags = task_flags::RESULT;
        t.seg = 0x0004_0003;
        let c = t.compact().expect("fits 32 bytes");
        assert_eq!(c.widen(), t);
        assert_eq!(bytemuck::bytes_of(&c)[..8], bytemuck::bytes_of(&t)[..8]);
    }

    #[test]
    fn only_tasks_without_counters_and_long_arguments_are_compact() {
        let fits = Task::raw(7, [u32::MAX; TASK_ARGS]);
        for i in 0..TASK_ARGS {
            let mut args = [0u32; TASK_ARGS];
            args[i] = 9;
            assert_eq!(Task::raw(7, args).compact().is_some(), i < COMPACT_ARGS, "word {i}");
        }
        assert!(fits.compact().is_none());
        let c = CounterId::new(3, 1);
        assert!(Task::raw(7, [0; TASK_ARGS]).after(c, 0).compact().is_none());
        assert!(Task::raw(7, [0; TASK_ARGS]).signals(c).compact().is_none());
        let mut v = Task::raw(7, [0; TASK_ARGS]);
        v.wait_value = 1;
        assert!(v.compact().is_none());
    }
}
