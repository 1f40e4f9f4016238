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
    /// A header word the runtime owns is set: a half of `seg` where the header names no
    /// counter (`seg` holds only the generations of the header's counters before
    /// submission: `Task::after`, `Task::signals`).
    #[error("the runtime's header word seg holds more than the header counters' generations")]
    NonZeroReserved,
    /// The task's record was built by another type than the one the runtime's task set
    /// holds at its id (`Task::with_args` tags each record with its type,
    /// `resident_shared::type_tag`): it is refused rather than run as that type.
    #[error("task {0:?} was built by a type that is not the runtime's task set's type of that id")]
    ForeignType(TaskId),
    /// The task's declaration names more items (slices, counters and pushed types
    /// together) than the device holds a running task to (`resident_shared::COLLECTED`).
    #[error("the task's declaration names more than {max} slices, counters and pushed types")]
    DeclarationTooLong {
        /// The most items a declaration may have.
        max: usize,
    },
    /// A counter (in the header or declared) is not live.
    #[error("counter {0} is not a live device counter")]
    BadCounter(u16),
    /// A declared slice names no live buffer of its element type (`arg`: the slice's
    /// place among those the task's type declares, from 0).
    #[error("declared slice {arg}: buffer handle {handle:#x} is not a live buffer of the right element type")]
    BadBuffer {
        /// The slice's place among the declared slices, from 0.
        arg: usize,
        /// The buffer handle it names.
        handle: u32,
    },
    /// A declared slice reaches past its buffer (`arg`: its place among the declared
    /// slices).
    #[error("declared slice {arg}: [{offset}, {offset}+{len}) is out of range")]
    OutOfRange {
        /// The slice's place among the declared slices, from 0.
        arg: usize,
        /// Its first element.
        offset: u32,
        /// Its number of elements.
        len: u32,
    },
    /// The type's own check: two lengths that must agree.
    #[error("slices have different lengths ({0} and {1})")]
    LengthMismatch(u32, u32),
    /// The type's own check: an index out of its range.
    #[error("index {index} is outside a slice of {len} elements")]
    IndexOutOfRange {
        /// The index.
        index: u32,
        /// The length it must be below.
        len: u32,
    },
    /// The type's own check, in words.
    #[error("inconsistent arguments: {0}")]
    BadArgs(&'static str),
    /// The type says `UNCHECKED`: only `Batch::submit_unchecked` accepts it.
    #[error("task id {:#x} carries raw addresses or injects a fault: only `Batch::submit_unchecked` accepts it", .0.0)]
    RequiresUnchecked(TaskId),
}

/// Everything that can go wrong, typed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// libcuda could not be loaded (no NVIDIA driver on this machine).
    #[error("no CUDA driver could be loaded (libcuda not found)")]
    NoDriver,
    /// The driver reports no device with the asked-for ordinal.
    #[error("no CUDA device found")]
    NoDevice,
    /// The kernel image was built without PTX (the device toolchain was missing, or
    /// `RESIDENT_NO_PTX` was set): only the CPU backend can run it. The text says why.
    #[error("this build carries no PTX ({0}); use the CPU backend or rebuild with the rustup components named at build time")]
    PtxUnavailable(&'static str),
    /// A CUDA driver call failed.
    #[error("CUDA driver call {call} failed: {name} ({code})")]
    Driver {
        /// The driver function, e.g. `cuModuleLoadData`.
        call: &'static str,
        /// Its `CUresult` code.
        code: u32,
        /// The code's name (`CUDA_ERROR_...`), as the driver gives it.
        name: String,
    },
    /// An invalid configuration or request, or one that the backend, device or kernel
    /// image cannot serve (in words).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A task was refused at submit time; nothing of its batch was submitted (as the
    /// `cause` of an [`Error::PartlyRun`]: nothing from its `ran` on).
    #[error("task {index} of the batch is invalid: {reason}")]
    InvalidTask {
        /// The task's place in the batch, from 0.
        index: usize,
        /// Why it was refused.
        reason: Rejection,
    },
    /// [`crate::Batch::pipelined`] refused a task after part of its batch was
    /// published: the batch's tasks `0..ran` ran (they have completed when this is
    /// returned), none from `ran` on runs. `cause` is the refusal, as
    /// [`crate::Runtime::submit`] would report it (its index at or after `ran`).
    #[error("tasks 0..{ran} of the batch ran; the rest was refused: {cause}")]
    PartlyRun {
        /// The first task of the batch that did not run.
        ran: usize,
        /// Why the rest was refused (an [`Error::InvalidTask`] naming the first bad task).
        cause: Box<Error>,
        /// How the tasks that ran ended, as their ticket's wait would say: `None` if
        /// every one succeeded, else the first failure ([`Error::TaskFailed`]).
        ran_failed: Option<Box<Error>>,
    },
    /// The submission ring has no room for the batch (`Batch::try_submit`, which does not wait).
    #[error("the submission queue is full")]
    QueueFull,
    /// A wait with a time limit ran out.
    #[error("timed out")]
    Timeout,
    /// The runtime is shutting down or shut down: new submits are refused and unfinished
    /// tickets fail with this.
    #[error("the runtime is shut down")]
    ShutDown,
    /// A task of the batch completed with an error status.
    #[error("task {index} of its batch (sequence number {seq}) failed on the device: {}", status.name())]
    TaskFailed {
        /// The failed task's index in its batch, list or reservation (for
        /// [`Status::ChildFailed`], of the first task of the segment whose pushed tasks
        /// failed).
        index: u64,
        /// The failed task's sequence number in the runtime's queue (the same task).
        seq: u64,
        /// The status it completed with.
        status: Status,
    },
    /// The device (or a CPU backend worker or stream thread) failed: a trapped or
    /// faulting kernel, a context in a sticky error state, a panic. Every outstanding
    /// ticket of the runtime fails with it. The text says what happened.
    #[error("device fault: {0}")]
    DeviceFault(String),
    /// The watchdog (a configured task deadline) found no progress past the deadline and
    /// aborted the workers; every outstanding ticket fails with it.
    #[error(
        "task {seq} (the oldest unfinished) made no progress for longer than the task deadline of {deadline:?}; the workers were aborted"
    )]
    TaskHung {
        /// Sequence number of the oldest unfinished task.
        seq: u64,
        /// The configured task deadline.
        deadline: std::time::Duration,
    },
    /// The persistent kernel (or the CPU workers) stopped without a shutdown.
    #[error("the persistent kernel exited while the runtime was running")]
    KernelExited,
    /// A buffer this large cannot be made: more than `u32::MAX` elements, or more bytes
    /// than a `usize` holds.
    #[error("buffer too large: {0} elements (at most u32::MAX)")]
    BufferTooLarge(usize),
    /// The buffer arena (`RuntimeConfig::buffer_arena`) has no free range of this many
    /// bytes.
    #[error("the buffer arena has no free range of {0} bytes")]
    ArenaFull(usize),
    /// A batch (or task list) of this many tasks: more than `u32::MAX`.
    #[error("batch too large: {0} tasks (at most u32::MAX)")]
    BatchTooLarge(usize),
    /// Every task of a [`crate::Reservation`] is written already (its length is the
    /// number).
    #[error("the reservation of {0} tasks is full")]
    ReservationFull(usize),
    /// This thread holds an open [`crate::Reservation`] of this runtime: a batch
    /// reserved now would wait for it to be committed, which this thread would never
    /// do while it waits. Commit or drop the reservation first.
    #[error("this thread holds an open reservation of this runtime: commit or drop it first")]
    ReservationOpen,
    /// Every device counter index is in use, by the runtimes of this process together
    /// (ids are unique in the process, so that one runtime never accepts another's; the
    /// limit is the number), or the free indices' generations are used up (an id is
    /// never handed out twice in a process: after about 2^32 counters made in one
    /// process, new ones are refused).
    #[error("too many live device counters in this process (at most {0}), or every free index's generations are used up")]
    TooManyCounters(usize),
    /// Every buffer table entry is in use (the limit is the number), or the free entries'
    /// handles are used up: a handle is never handed out twice in a process, so after
    /// about 2^32 buffers made in one process new ones are refused.
    #[error("too many live buffers (at most {0}), or every free entry's handles are used up")]
    TooManyBuffers(usize),
    /// `Ticket::results` on a batch not submitted with `Batch::results`.
    #[error("this ticket keeps no results: submit with rt.batch(&tasks).results()")]
    NoResults,
    /// A handle of another runtime or device (a stream-API object or a ticket of
    /// another device, a buffer of another runtime in a collective) was given to this
    /// one: nothing of it reaches this runtime's workers. (Slices and counter ids
    /// of another runtime inside tasks are refused as [`Rejection::BadBuffer`] and
    /// [`Rejection::BadCounter`]: no live buffer or counter of this runtime has them.)
    #[error("this {0} belongs to another runtime")]
    ForeignHandle(&'static str),
    /// A request that can never succeed on this runtime however long it waits: a
    /// batch for `Batch::try_submit`, or a reservation, larger than the ring (`capacity`
    /// slots). [`crate::Runtime::submit`] feeds a larger batch in as room frees.
    #[error("{len} tasks can never be in the ring of {capacity} slots at once")]
    ExceedsQueue {
        /// Tasks asked for.
        len: usize,
        /// Slots in the ring.
        capacity: usize,
    },
    /// A runtime of this process already lives on this CUDA device (its persistent
    /// kernel, or memory whose free would wait for another's): a second one would hang
    /// in the driver (a module load and a pinned free wait for every running kernel of
    /// the context). Drop the first runtime and every handle of it (buffers, lists,
    /// tickets), or use [`crate::Runtime::device`] for the stream API beside it.
    #[error(
        "device {0} already holds a runtime of this process: drop it and every handle of it first (a second would wait for its kernel forever)"
    )]
    DeviceInUse(usize),
    /// A runtime makes at most this many links over its life
    /// ([`crate::Link::new`]): an index is never reused, since a push that read a
    /// dropped link's entry may still be writing its outbox.
    #[error("this runtime has made {0} links already, the most it can")]
    TooManyLinks(usize),
    /// An SM partition was asked for ([`crate::RuntimeConfig::sm_partition`]) where
    /// CUDA green contexts are missing: the CPU backend, a driver older than CUDA 12.5,
    /// or a device without them. The text says which.
    #[error("SM partitions need CUDA green contexts, which are not available here: {0}")]
    PartitionUnsupported(String),
    /// A peer link ([`crate::Link::peer`]) cannot join these two runtimes:
    /// it needs two CUDA devices with peer access between them, the same task set on
    /// both, and the receiver's relay warp. The text says what is missing;
    /// [`crate::Link::new`] (through the host) joins any two runtimes.
    #[error("no peer path between these runtimes: {0}")]
    NoPeerPath(String),
    /// A `try_*` call would have had to wait for another thread, which holds the
    /// registries' or the producer's lock (a buffer made or dropped, a reservation in
    /// progress), or has not yet written the end of a list run that this batch's run
    /// replaces (a reservation just made): nothing was done; try again.
    #[error("the runtime is busy with another thread's request: nothing was done, try again")]
    WouldBlock,
    /// A range of elements that does not lie in the buffer (`Buffer::try_slice`).
    #[error("range [{start}, {end}) is not within a buffer of {len} elements")]
    RangeOutOfBounds {
        /// The range's first element (saturated at `usize::MAX`).
        start: usize,
        /// Its end (saturated at `usize::MAX`).
        end: usize,
        /// The buffer's length.
        len: usize,
    },
    /// A copy or launch got a slice of the wrong length.
    #[error("length mismatch: expected {expected}, got {got}")]
    LengthMismatch {
        /// The length it needed (for a write at an offset: the room left), in elements.
        expected: usize,
        /// The length it got.
        got: usize,
    },
}

/// `std::result::Result` with the runtime's [`Error`] by default.
pub type Result<T, E = Error> = std::result::Result<T, E>;
