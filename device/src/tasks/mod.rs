//! Built-in tasks and the opcode dispatch. A task runs on a whole warp (one lane on the
//! CPU backend) and returns a warp-uniform [`Outcome`]. Every task checks its own
//! arguments: a bad task completes with an error status and touches nothing.

pub(crate) mod axpy;
mod fault;
mod mark;
mod noop;
mod spin;
mod terminate;
mod tree;

pub use tree::MAX_FANOUT as MAX_TREE_FANOUT;

use resident_shared::segment::{self, SegmentCount};
use resident_shared::{BufferEntry, Opcode, QueueHeader, Status, Task, task_flags};

use crate::arch;
use crate::spawn::SpawnRing;

/// What a task reports: a status and a small inline result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub status: Status,
    pub result: u64,
}

impl Outcome {
    pub const fn ok(result: u64) -> Self {
        Self { status: Status::Ok, result }
    }
    pub const fn err(status: Status) -> Self {
        Self { status, result: 0 }
    }
}

impl From<Result<u64, Status>> for Outcome {
    #[inline(always)]
    fn from(r: Result<u64, Status>) -> Self {
        match r {
            Ok(v) => Self::ok(v),
            Err(s) => Self::err(s),
        }
    }
}

/// What a task may see of the runtime.
#[derive(Clone, Copy)]
pub struct TaskContext {
    pub buffers: *const BufferEntry,
    /// Null when the task runs outside the queue (the one-launch baseline).
    pub header: *mut QueueHeader,
    /// The device counter table (`MAX_COUNTERS` entries); null outside the queue.
    pub counters: *mut u32,
    /// Where [`TaskContext::spawn`] pushes; none outside the queue.
    pub spawn: SpawnRing,
    /// The segment counts (`crate::completion`); null outside the queue.
    pub counts: *mut SegmentCount,
    /// The running task's segment as a child's `seg` word ([`segment::child`]): its
    /// children are counted in the same segment.
    pub child_seg: u32,
}

impl TaskContext {
    /// The host asked every worker to stop (see `queue.rs`, `abort`).
    #[inline(always)]
    pub fn aborting(&self) -> bool {
        // Acquire, .sys: pairs with the host's stream write of `abort`.
        !self.header.is_null() && unsafe { crate::arch::ld_acquire_sys(&raw const (*self.header).abort.value) } != 0
    }
}

impl TaskContext {
    /// Pushes `child` for another worker to run (warp-collective; every lane must call
    /// with the same task). The child completes as part of the running task's segment,
    /// so the host's ticket waits for it too. `Err(QueueFull)` if the spawn ring has no
    /// room: nothing was pushed.
    ///
    /// # Safety
    /// Only from a task running in the persistent loop (or with `spawn` none).
    #[inline(always)]
    pub unsafe fn spawn(&self, child: &Task) -> Result<(), Status> {
        if self.spawn.is_none() || self.counts.is_null() {
            return Err(Status::QueueFull);
        }
        let mut ok = 0u32;
        if arch::lane_id() == 0 {
            let mut t = *child;
            t.flags = task_flags::CHILD;
            t.seg = self.child_seg;
            let state = unsafe { &raw mut (*self.counts.add(segment::child_index(self.child_seg) as usize)).state };
            // Relaxed: program order puts it before this task's own release add, and
            // the push's release orders it before the child's add (spawn.rs, step 4).
            unsafe { arch::atom_add_relaxed_gpu_u64(state, segment::CHILD_ADD) };
            if unsafe { self.spawn.try_push(&t) } {
                ok = 1;
            } else {
                unsafe { arch::atom_add_relaxed_gpu_u64(state, 1) };
            }
        }
        if arch::shfl_idx(ok, 0) != 0 { Ok(()) } else { Err(Status::QueueFull) }
    }
}

/// The tasks a persistent kernel dispatches to. A type parameter of the persistent loop,
/// so that each kernel flavor inlines only its own tasks: [`Standard`] in
/// `resident_persistent` (which must stay within its register budget), the standard
/// tasks plus the fused-op examples' (`crate::nn::NnTasks`) in `resident_persistent_nn`.
pub trait TaskSet {
    /// Runs `task`, the task in slot `seq`.
    ///
    /// # Safety
    /// As for [`execute`].
    unsafe fn execute(task: &Task, cx: &TaskContext, seq: u32) -> Outcome;
}

/// The built-in tasks ([`execute`]).
pub struct Standard;

impl TaskSet for Standard {
    #[inline(always)]
    unsafe fn execute(task: &Task, cx: &TaskContext, seq: u32) -> Outcome {
        unsafe { execute(task, cx, seq) }
    }
}

/// Runs `task`, the task in slot `seq`.
///
/// # Safety
/// `cx` must hold a valid buffer table; the buffers it names must not be written by
/// anything else while the task runs (as for any CUDA kernel).
#[inline(always)]
pub unsafe fn execute(task: &Task, cx: &TaskContext, seq: u32) -> Outcome {
    match Opcode::from_u16(task.opcode) {
        Some(Opcode::Noop) => noop::run(task),
        Some(Opcode::Axpy) => unsafe { axpy::run(task, cx) }.into(),
        Some(Opcode::Spin) => spin::run(task, cx),
        Some(Opcode::Mark) => unsafe { mark::run(task, cx) }.into(),
        // A copy for the out-of-line call: the address of `cx` itself never escapes,
        // so it stays in registers (else every task stores it to local memory).
        Some(Opcode::Tree) => {
            let own = *cx;
            unsafe { tree::run(task, &own) }.into()
        }
        // Reliability (issue 5): fault injection and raw addresses, opcodes 32..=47.
        Some(Opcode::FaultTrap) => fault::trap(),
        Some(Opcode::FaultIllegalAddress) => unsafe { fault::illegal_address(task) },
        Some(Opcode::AxpyRaw) => unsafe { axpy::run_raw(task) }.into(),
        Some(Opcode::Terminate) if task.flags & task_flags::CHILD == 0 => unsafe { terminate::run(cx, seq) },
        Some(Opcode::Terminate) => Outcome::err(Status::InvalidOpcode),
        // Example tasks (issue 4): only the `Nn` flavor (`crate::nn::NnTasks`) runs them.
        Some(Opcode::ConvTile | Opcode::BnNormalize | Opcode::RecordParse | Opcode::RecordTransform | Opcode::RecordReduce) => {
            Outcome::err(Status::InvalidOpcode)
        }
        None => Outcome::err(Status::InvalidOpcode),
    }
}
