//! Built-in tasks and the opcode dispatch. A task runs on a whole warp (one lane on the
//! CPU backend) and returns a warp-uniform [`Outcome`]. Every task checks its own
//! arguments: a bad task completes with an error status and touches nothing.

mod axpy;
mod mark;
mod noop;
mod spin;
mod terminate;

use resident_shared::{BufferEntry, Opcode, QueueHeader, Status, Task};

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
pub struct TaskContext {
    pub buffers: *const BufferEntry,
    /// Null when the task runs outside the queue (the one-launch baseline).
    pub header: *mut QueueHeader,
    /// The device counter table (`MAX_COUNTERS` entries); null outside the queue.
    pub counters: *mut u32,
}

impl TaskContext {
    /// The host asked every worker to stop (see `queue.rs`, `abort`).
    #[inline(always)]
    pub fn aborting(&self) -> bool {
        // Acquire, .sys: pairs with the host's stream write of `abort`.
        !self.header.is_null() && unsafe { crate::arch::ld_acquire_sys(&raw const (*self.header).abort.value) } != 0
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
        Some(Opcode::Terminate) => unsafe { terminate::run(cx, seq) },
        None => Outcome::err(Status::InvalidOpcode),
    }
}
