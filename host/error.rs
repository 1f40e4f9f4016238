//! Errors: one small, clonable type for everything the runtime can report, so that a
//! device fault can be delivered to every waiting ticket.

use resident_shared::{Status, TaskId};

/// Why a task was refused at submit time (nothing of its batch was submitted).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The task's id is not in the set of the runtime's kernel image.
    #[error("task id {:#x} is not in the runtime's task set", .0.0)]
    UnknownTask(TaskId),
    /// The task's id is the runtime's own (the terminate sentinel).
    #[error("task id {:#x} is reserved for the runtime", .0.0)]
    ReservedTask(TaskId),
    /// The task's type declares children of a type the set does not hold.
    #[error("the task may push tasks of id {:#x}, which is not in the runtime's task set", .0.0)]
    UnknownChild(TaskId),
    /// The header words the runtime owns (`flags`, `seg`) are set.
    #[error("the runtime's header words (flags, seg) are not zero")]
    NonZeroReserved,
    /// A counter (in the header or declared) is not live.
    #[error("counter {0} is not a live device counter")]
    BadCounter(u16),
    /// A declared slice names no live buffer of its element type (`arg`: the slice's
    /// place among those the task's type declares, from 0).
    #[error("declared slice {arg}: buffer handle {handle:#x} is not a live buffer of the right element type")]
    BadBuffer { arg: usize, handle: u32 },
    /// A declared slice reaches past its buffer (`arg`: its place among the declared
    /// slices).
    #[error("declared slice {arg}: [{offset}, {offset}+{len}) is out of range")]
    OutOfRange { arg: usize, offset: u32, len: u32 },
    /// The type's own check: two lengths that must agree.
    #[error("slices have different lengths ({0} and {1})")]
    LengthMismatch(u32, u32),
    /// The type's own check: an index out of its range.
    #[error("index {index} is outside a slice of {len} elements")]
    IndexOutOfRange { index: u32, len: u32 },
    /// The type's own check, in words.
    #[error("inconsistent arguments: {0}")]
    BadArgs(&'static str),
    /// The type says `UNCHECKED`: only `submit_unchecked` accepts it.
    #[error("task id {:#x} carries raw addresses or injects a fault: only `submit_unchecked` accepts it", .0.0)]
    RequiresUnchecked(TaskId),
}

/// Everything that can go wrong, typed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("no CUDA driver could be loaded (libcuda not found)")]
    NoDriver,
    #[error("no CUDA device found")]
    NoDevice,
    #[error("this build carries no PTX ({0}); use the CPU backend or rebuild with the rustup components named at build time")]
    PtxUnavailable(&'static str),
    #[error("CUDA driver call {call} failed: {name} ({code})")]
    Driver { call: &'static str, code: u32, name: String },
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("task {index} of the batch is invalid: {reason}")]
    InvalidTask { index: usize, reason: Rejection },
    #[error("the submission queue is full")]
    QueueFull,
    #[error("timed out")]
    Timeout,
    #[error("the runtime is shut down")]
    ShutDown,
    #[error("task {seq} failed on the device: {}", status.name())]
    TaskFailed { seq: u64, status: Status },
    #[error("device fault: {0}")]
    DeviceFault(String),
    #[error(
        "task {seq} (the oldest unfinished) made no progress for longer than the task deadline of {deadline:?}; the workers were aborted"
    )]
    TaskHung { seq: u64, deadline: std::time::Duration },
    #[error("the persistent kernel exited while the runtime was running")]
    KernelExited,
    #[error("buffer too large: {0} elements (at most u32::MAX)")]
    BufferTooLarge(usize),
    #[error("batch too large: {0} tasks (at most u32::MAX)")]
    BatchTooLarge(usize),
    #[error("too many live device counters (at most {0})")]
    TooManyCounters(usize),
    #[error("too many live buffers (at most {0})")]
    TooManyBuffers(usize),
    #[error("this ticket keeps no results: submit with submit_for_results")]
    NoResults,
    #[error("length mismatch: expected {expected}, got {got}")]
    LengthMismatch { expected: usize, got: usize },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
