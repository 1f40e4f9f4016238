//! The task record: what the host (or a running task) writes into the queue and a
//! worker reads back, 64 bytes, one per slot.

use bytemuck::{Pod, Zeroable};

use crate::buffer::BufSlice;

/// Number of 32-bit argument words in a [`Task`].
pub const TASK_ARGS: usize = 12;

/// Operation codes of the built-in tasks.
///
/// Zero is deliberately not an opcode: a zeroed or poisoned slot never decodes as a
/// valid task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum Opcode {
    /// Does nothing; its result echoes `args[0..2]` as a `u64`, so a test can tell
    /// which task a completion belongs to.
    Noop = 1,
    /// `y[i] = alpha * x[i] + y[i]` over two f32 buffer slices of equal length.
    Axpy = 2,
    /// Busy-waits on the device clock for a number of nanoseconds (or until the
    /// runtime aborts); result: nanoseconds actually spent.
    Spin = 3,
    /// Atomically adds one to a `u32` element of a buffer; result: the value before.
    /// Used to prove that every task runs exactly once.
    Mark = 4,
    /// A node of a tree of tasks built on the device: marks its node (as `Mark` does),
    /// then pushes `fanout` children one level down until `depth` reaches zero. The
    /// test and benchmark of device-side follow-up tasks.
    Tree = 5,
    // Example tasks (issue 4), run only by the `Nn` kernel flavor; layouts in `crate::nn`.
    /// A conv tile with its per-channel partial statistics.
    ConvTile = 16,
    /// Batch-norm statistics finalize, normalize, scale, shift, ReLU of one channel.
    BnNormalize = 17,
    /// Record pipeline stage 1: parse records, push stage 2.
    RecordParse = 18,
    /// Record pipeline stage 2: filter and transform, push stage 3.
    RecordTransform = 19,
    /// Record pipeline stage 3: reduce per key.
    RecordReduce = 20,
    // Reliability (issue 5): opcodes 32..=47. Only `submit_unchecked` accepts them
    // ([`Opcode::unchecked_only`]); constructors in `crate::unchecked`.
    /// Executes `trap`: the kernel dies with a sticky error (on the CPU backend the
    /// worker panics). Fault injection.
    FaultTrap = 32,
    /// Stores through the forged address `args[0..2]`: an illegal address kills the
    /// kernel (the CPU backend models it as a panic and stores nothing). Fault injection.
    FaultIllegalAddress = 33,
    /// `y = alpha * x + y` through raw addresses (`args[1..3]`, `args[3..5]`) of
    /// `args[5]` f32s: no buffer check on either side.
    AxpyRaw = 34,
    /// The terminate sentinel: every worker whose claimed slot lies after this one
    /// leaves the persistent loop. Submitted by the runtime on shutdown only.
    Terminate = 0xffff,
}

impl Opcode {
    /// Decodes a raw opcode word; `None` for anything that is not a built-in task.
    #[inline]
    pub const fn from_u16(raw: u16) -> Option<Self> {
        match raw {
            1 => Some(Self::Noop),
            2 => Some(Self::Axpy),
            3 => Some(Self::Spin),
            4 => Some(Self::Mark),
            5 => Some(Self::Tree),
            16 => Some(Self::ConvTile),
            17 => Some(Self::BnNormalize),
            18 => Some(Self::RecordParse),
            19 => Some(Self::RecordTransform),
            20 => Some(Self::RecordReduce),
            32 => Some(Self::FaultTrap),
            33 => Some(Self::FaultIllegalAddress),
            34 => Some(Self::AxpyRaw),
            0xffff => Some(Self::Terminate),
            _ => None,
        }
    }

    /// Leaf tasks of bounded length that a lone submission marks
    /// [`task_flags::EXPRESS`]: no children (a ticket resolved by the task's own record
    /// must not leave any behind), no faults.
    #[inline]
    pub const fn express(self) -> bool {
        matches!(self, Self::Noop | Self::Axpy | Self::Spin | Self::Mark)
    }

    /// Tasks that carry raw addresses or inject faults: the host's checked submit
    /// refuses them; only `submit_unchecked` (an `unsafe` API) passes them on.
    #[inline]
    pub const fn unchecked_only(self) -> bool {
        matches!(self, Self::FaultTrap | Self::FaultIllegalAddress | Self::AxpyRaw)
    }
}

/// One task: a 16-byte header and twelve argument words whose meaning depends on the
/// opcode. Built with the constructors below rather than by hand.
///
/// Header words, and who writes them:
/// - `opcode` (user), `flags` and `seg` (the runtime, at submission: a user task must
///   leave them zero);
/// - `wait_counter`, `wait_value`, `signal_counter` (user, through [`Task::after`] and
///   [`Task::signals`]): device-side dependencies, resolved without the host. Counter 0
///   means none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(16))]
pub struct Task {
    pub opcode: u16,
    /// [`task_flags`] bits, set by the runtime.
    pub flags: u16,
    /// Where this task's completion is counted: see [`crate::segment`]. Set by the
    /// runtime.
    pub seg: u32,
    /// The task runs only once `counters[wait_counter] >= wait_value` (0: no wait).
    pub wait_counter: u16,
    /// After the task ran (and its writes are visible at GPU scope), one is added to
    /// `counters[signal_counter]` (0: no signal).
    pub signal_counter: u16,
    pub wait_value: u32,
    pub args: [u32; TASK_ARGS],
}
const _: () = assert!(core::mem::size_of::<Task>() == 64);
const _: () = assert!(core::mem::align_of::<Task>() == 16);
const _: () = assert!(core::mem::offset_of!(Task, seg) == 4);
const _: () = assert!(core::mem::offset_of!(Task, wait_counter) == 8);
const _: () = assert!(core::mem::offset_of!(Task, wait_value) == 12);
const _: () = assert!(core::mem::offset_of!(Task, args) == 16);

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
    /// record. Set by the runtime only on [`crate::Opcode::express`] opcodes, which
    /// never spawn children. The relay warp may run such a task itself
    /// (`device/src/relay.rs`); docs/protocol.md has the handshake.
    pub const EXPRESS: u16 = 4;
    /// Set by the relay warp in the ring copy of an express task it has already run:
    /// the worker that claims the slot only counts it in its segment (no run, no record,
    /// no signal).
    pub const RELAYED: u16 = 8;
}

impl Task {
    /// A task with a raw opcode and arguments. The runtime validates it at submit
    /// time; the device validates it again before running it.
    pub const fn raw(opcode: u16, args: [u32; TASK_ARGS]) -> Self {
        Self { opcode, flags: 0, seg: 0, wait_counter: 0, signal_counter: 0, wait_value: 0, args }
    }

    /// This task waits until device counter `counter` reaches `value` (a value that
    /// counts signals: the counter only grows).
    pub const fn after(mut self, counter: crate::CounterId, value: u32) -> Self {
        self.wait_counter = counter.0;
        self.wait_value = value;
        self
    }

    /// This task adds one to device counter `counter` once it has run.
    pub const fn signals(mut self, counter: crate::CounterId) -> Self {
        self.signal_counter = counter.0;
        self
    }

    /// A task that does nothing and completes with `tag` as its result.
    pub const fn noop(tag: u64) -> Self {
        let mut args = [0; TASK_ARGS];
        args[0] = tag as u32;
        args[1] = (tag >> 32) as u32;
        Self::raw(Opcode::Noop as u16, args)
    }

    /// `y = alpha * x + y` on two f32 slices of the same length.
    pub const fn axpy(alpha: f32, x: BufSlice, y: BufSlice) -> Self {
        let mut args = [0; TASK_ARGS];
        args[0] = alpha.to_bits();
        args[1] = x.handle.0;
        args[2] = x.offset;
        args[3] = x.len;
        args[4] = y.handle.0;
        args[5] = y.offset;
        args[6] = y.len;
        Self::raw(Opcode::Axpy as u16, args)
    }

    /// Spin on the device clock for `nanos` nanoseconds.
    pub const fn spin(nanos: u64) -> Self {
        let mut args = [0; TASK_ARGS];
        args[0] = nanos as u32;
        args[1] = (nanos >> 32) as u32;
        Self::raw(Opcode::Spin as u16, args)
    }

    /// Atomically increment element `index` of a `u32` buffer.
    pub const fn mark(counters: BufSlice, index: u32) -> Self {
        let mut args = [0; TASK_ARGS];
        args[0] = counters.handle.0;
        args[1] = counters.offset;
        args[2] = counters.len;
        args[3] = index;
        Self::raw(Opcode::Mark as u16, args)
    }

    /// Node `node` of a tree of tasks: marks `marks[node]`, then, if `depth > 0`,
    /// pushes children `node * fanout + 1 ..= node * fanout + fanout` with `depth - 1`.
    /// A tree of depth `d` has `(fanout^(d+1) - 1) / (fanout - 1)` nodes, numbered
    /// breadth-first from 0; `marks` needs that many elements.
    pub const fn tree(marks: BufSlice, node: u32, depth: u32, fanout: u32) -> Self {
        let mut args = [0; TASK_ARGS];
        args[0] = marks.handle.0;
        args[1] = marks.offset;
        args[2] = marks.len;
        args[3] = node;
        args[4] = depth;
        args[5] = fanout;
        Self::raw(Opcode::Tree as u16, args)
    }

    /// Number of nodes of a tree of `depth` levels below the root and `fanout`
    /// children per node, or `None` if it does not fit in a `u32`.
    pub const fn tree_nodes(depth: u32, fanout: u32) -> Option<u32> {
        let mut total: u64 = 0;
        let mut level: u64 = 1;
        let mut d = 0;
        while d <= depth {
            total += level;
            if total > u32::MAX as u64 {
                return None;
            }
            level *= fanout as u64;
            d += 1;
        }
        Some(total as u32)
    }

    /// The terminate sentinel (runtime use).
    pub const fn terminate() -> Self {
        Self::raw(Opcode::Terminate as u16, [0; TASK_ARGS])
    }

    /// The two argument words at `i` and `i + 1` as one little-endian `u64`.
    #[inline]
    pub const fn arg_u64(&self, i: usize) -> u64 {
        self.args[i] as u64 | (self.args[i + 1] as u64) << 32
    }

    /// The buffer slice stored in three argument words starting at `i`.
    #[inline]
    pub const fn arg_slice(&self, i: usize) -> BufSlice {
        BufSlice { handle: crate::BufferHandle(self.args[i]), offset: self.args[i + 1], len: self.args[i + 2] }
    }
}
