//! Argument layouts and ids of the built-in tasks, which every runtime can run unless
//! its task set leaves them out. Their device code is `resident_device::builtin`; each
//! layout here is the `Pod` struct that a task's 48 argument bytes hold.
//!
//! Ids `1..=31` are the built-in tasks proper, `32..=47` the fault-injection and
//! raw-address tasks that only `Batch::submit_unchecked` accepts.

use bytemuck::{Pod, Zeroable};

use crate::{Slice, TASK_ARGS, Task, TaskId};

/// Does nothing; its result is `tag`, so a test can tell which task a completion
/// belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Noop {
    /// Echoed as the result.
    pub tag: u64,
}

/// `y[i] = alpha * x[i] + y[i]` over two slices of equal length; result: the length.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Axpy {
    /// The scale of `x`.
    pub alpha: f32,
    /// Read.
    pub x: Slice<f32>,
    /// Read and written; as long as `x`.
    pub y: Slice<f32>,
}

/// Busy-waits on the device clock for `nanos` nanoseconds (or until the runtime
/// aborts); result: nanoseconds actually spent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Spin {
    /// How long.
    pub nanos: u64,
}

/// Atomically adds one to `marks[index]`; result: the value before. Proves that every
/// task runs exactly once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Mark {
    /// The counters (updated atomically).
    pub marks: Slice<u32>,
    /// Which one, below `marks.len`.
    pub index: u32,
}

/// A node of a tree of tasks built on the device: marks `marks[node]` (as [`Mark`]
/// does), then pushes its children one level down until `depth` reaches zero: `fanout`
/// of them, or, in an irregular tree, [`irregular_fanout`]`(node, fanout)` (0 to
/// `fanout`, data-dependent). Either way child `k` of `node` is
/// `node * fanout + 1 + k`: the nodes of an irregular tree are a subset of the full
/// tree's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Tree {
    /// One counter per node of the whole tree (updated atomically).
    pub marks: Slice<u32>,
    /// This node, numbered breadth-first from 0.
    pub node: u32,
    /// Levels below this node.
    pub depth: u32,
    /// Children per node (the most per node in an irregular tree), 1 to
    /// [`MAX_TREE_FANOUT`].
    pub fanout: u32,
    /// 1: an irregular tree (children per node from [`irregular_fanout`]); 0: full.
    pub irregular: u32,
}

/// Children of `node` in an irregular [`Tree`] of at most `max` children per node: a
/// hash of the node's number, spread over `0..=max` (mean `max / 2`). The root (node 0)
/// always has `max`, so that no tree dies at its root.
#[inline]
pub const fn irregular_fanout(node: u32, max: u32) -> u32 {
    if node == 0 {
        return max;
    }
    // A 32-bit finaliser (lowbias32): every input bit moves every output bit.
    let mut x = node;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    ((x as u64 * (max as u64 + 1)) >> 32) as u32
}

/// Calls `f(n, d)` for every node `n` of the irregular tree rooted at `node` with
/// `depth` levels below it and at most `max` children per node (`d`: the levels below
/// `n`), parents before their children: the reference that tests and benchmarks check
/// the device's trees against.
pub fn visit_irregular_tree(node: u32, depth: u32, max: u32, f: &mut impl FnMut(u32, u32)) {
    f(node, depth);
    if depth > 0 {
        for k in 0..irregular_fanout(node, max) {
            visit_irregular_tree(node * max + 1 + k, depth - 1, max, f);
        }
    }
}

/// Pushes `count` leaves of a [`Tree`] (nodes `first..first + count` of `marks`, depth
/// 0: each marks its node once) into another runtime through `link`
/// (`TaskCx::push_to`); result: `count`. Tests and benchmarks links. `marks` is the
/// other runtime's buffer: this runtime does not check it (it never touches it), the
/// other does when the pushes are submitted there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Forward {
    /// The other runtime's counters.
    pub marks: Slice<u32>,
    /// The link to push through (made by this runtime's host: `Link::new`).
    pub link: crate::link::LinkId,
    /// The first node.
    pub first: u32,
    /// Leaves to push, 1 to [`MAX_FORWARD`].
    pub count: u32,
}

/// Most pushes of one [`Forward`] task.
pub const MAX_FORWARD: u32 = 1024;

/// Executes `trap`: the kernel dies with a sticky error (on the CPU backend the worker
/// panics). Fault injection; `Batch::submit_unchecked` only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct FaultTrap {
    /// Nothing (a `Pod` struct needs a field).
    pub _unused: u32,
}

/// Stores through the forged address `addr`: an illegal address kills the kernel (the
/// CPU backend models it as a panic and stores nothing). `Batch::submit_unchecked` only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct FaultIllegalAddress {
    /// Where to store (unchecked).
    pub addr: u64,
}

/// `y = alpha * x + y` through raw addresses of `len` f32s each: no buffer check on
/// either side. `Batch::submit_unchecked` only.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct AxpyRaw {
    /// Address of `len` f32s, read.
    pub x: u64,
    /// Address of `len` f32s, read and written.
    pub y: u64,
    /// The scale of `x`.
    pub alpha: f32,
    /// Elements.
    pub len: u32,
}

/// Ids of the built-in tasks.
pub mod ids {
    use crate::TaskId;
    /// [`super::Noop`].
    pub const NOOP: TaskId = TaskId(1);
    /// [`super::Axpy`].
    pub const AXPY: TaskId = TaskId(2);
    /// [`super::Spin`].
    pub const SPIN: TaskId = TaskId(3);
    /// [`super::Mark`].
    pub const MARK: TaskId = TaskId(4);
    /// [`super::Tree`].
    pub const TREE: TaskId = TaskId(5);
    /// [`super::Forward`].
    pub const FORWARD: TaskId = TaskId(6);
    /// [`super::FaultTrap`].
    pub const FAULT_TRAP: TaskId = TaskId(32);
    /// [`super::FaultIllegalAddress`].
    pub const FAULT_ILLEGAL_ADDRESS: TaskId = TaskId(33);
    /// [`super::AxpyRaw`].
    pub const AXPY_RAW: TaskId = TaskId(34);
}

/// Most children per node of a [`Tree`].
pub const MAX_TREE_FANOUT: u32 = 16;

impl Task {
    /// A task that does nothing and completes with `tag` as its result.
    pub fn noop(tag: u64) -> Self {
        Self::with_args(ids::NOOP, &Noop { tag })
    }

    /// `y = alpha * x + y` on two f32 slices of the same length.
    pub fn axpy(alpha: f32, x: Slice<f32>, y: Slice<f32>) -> Self {
        Self::with_args(ids::AXPY, &Axpy { alpha, x, y })
    }

    /// Spin on the device clock for `nanos` nanoseconds.
    pub fn spin(nanos: u64) -> Self {
        Self::with_args(ids::SPIN, &Spin { nanos })
    }

    /// Atomically increment element `index` of a `u32` buffer.
    pub fn mark(marks: Slice<u32>, index: u32) -> Self {
        Self::with_args(ids::MARK, &Mark { marks, index })
    }

    /// Node `node` of a tree of tasks: marks `marks[node]`, then, if `depth > 0`,
    /// pushes children `node * fanout + 1 ..= node * fanout + fanout` with `depth - 1`.
    /// A tree of depth `d` has `(fanout^(d+1) - 1) / (fanout - 1)` nodes, numbered
    /// breadth-first from 0; `marks` needs that many elements.
    pub fn tree(marks: Slice<u32>, node: u32, depth: u32, fanout: u32) -> Self {
        Self::with_args(ids::TREE, &Tree { marks, node, depth, fanout, irregular: 0 })
    }

    /// Node `node` of an irregular tree of tasks: as [`Task::tree`], but node `n` has
    /// [`irregular_fanout`]`(n, max_fanout)` children (0 to `max_fanout`, data-dependent).
    /// Its nodes keep the full tree's numbers, so `marks` needs
    /// [`Task::tree_nodes`]`(depth, max_fanout)` elements; [`visit_irregular_tree`]
    /// walks the nodes that run.
    pub fn irregular_tree(marks: Slice<u32>, node: u32, depth: u32, max_fanout: u32) -> Self {
        Self::with_args(ids::TREE, &Tree { marks, node, depth, fanout: max_fanout, irregular: 1 })
    }

    /// Pushes leaves `first..first + count` of a tree over `marks` (another runtime's
    /// buffer) into that runtime through `link` ([`Forward`]).
    pub fn forward(link: crate::link::LinkId, marks: Slice<u32>, first: u32, count: u32) -> Self {
        Self::with_args(ids::FORWARD, &Forward { marks, link, first, count })
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

    /// A task that never ends on its own: a spin for 2^64 - 1 ns, which leaves only when
    /// the runtime aborts (the watchdog, or a shutdown past its timeout). For tests of
    /// both.
    pub fn hang() -> Self {
        Self::spin(u64::MAX)
    }

    /// A task that makes the kernel trap: on a GPU the whole persistent kernel dies with
    /// a sticky error and every outstanding ticket fails with `Error::DeviceFault`; on
    /// the CPU backend the worker thread panics, with the same outcome.
    ///
    /// # Safety
    /// Submitting it ends the runtime (tickets resolve, a new runtime can be created;
    /// docs/reliability.md). Anything else on the GPU's primary context is lost too.
    pub unsafe fn fault_trap() -> Self {
        Self::raw(ids::FAULT_TRAP.0, [0; TASK_ARGS])
    }

    /// A task that stores a `u32` through `addr` without any check. With a forged
    /// address (8, or an unmapped high address) the kernel dies with an illegal-address
    /// error; the CPU backend panics instead of storing (a real wild store would take
    /// the test process down).
    ///
    /// # Safety
    /// As for [`Task::fault_trap`]; with a valid address, it writes there unchecked.
    pub unsafe fn fault_illegal_address(addr: u64) -> Self {
        Self::with_args(ids::FAULT_ILLEGAL_ADDRESS, &FaultIllegalAddress { addr })
    }

    /// `y[i] = alpha * x[i] + y[i]` for `i < len`, through raw addresses (device
    /// addresses on a GPU, host addresses on the CPU backend), checked by nobody.
    ///
    /// # Safety
    /// `x` and `y` must be valid, 4-byte aligned, for `len` f32s each, in memory the
    /// device can reach, until the task has completed; nothing else may write `y`
    /// meanwhile.
    pub unsafe fn axpy_raw(alpha: f32, x: u64, y: u64, len: u32) -> Self {
        Self::with_args(ids::AXPY_RAW, &AxpyRaw { x, y, alpha, len })
    }
}

/// The ids a built-in-only set holds, for checks that want them as a list.
pub const IDS: [TaskId; 8] =
    [ids::NOOP, ids::AXPY, ids::SPIN, ids::MARK, ids::TREE, ids::FAULT_TRAP, ids::FAULT_ILLEGAL_ADDRESS, ids::AXPY_RAW];
