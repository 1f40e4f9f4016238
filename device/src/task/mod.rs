//! The open task set: how a device crate declares its own tasks.
//!
//! A task type is one `Pod` argument struct (at most [`TASK_ARG_BYTES`] bytes) with an
//! implementation of [`DeviceTask`]: its id, what it touches ([`DeviceTask::declare`],
//! checked on the host before submission), and the function a worker warp runs
//! ([`DeviceTask::run`]). A [`TaskSet`], declared with [`crate::task_set!`], lists the
//! types one persistent kernel runs; its dispatcher is a chain of comparisons
//! monomorphized per set, so an open set costs what a closed `match` cost.
//!
//! ```
//! use resident_device::{ArgError, Declare, DeviceTask, Status, TaskCx, TaskId};
//! use resident_device::shared::Slice;
//!
//! /// `bins[x[i] % bins.len] += 1` for every element of `x`.
//! #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
//! #[repr(C)]
//! pub struct Histogram {
//!     pub x: Slice<u32>,
//!     pub bins: Slice<u32>,
//! }
//!
//! impl DeviceTask for Histogram {
//!     const ID: TaskId = TaskId(0x100);
//!     fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
//!         d.read(self.x);
//!         d.atomic(self.bins);
//!         if self.bins.len == 0 { Err(ArgError::Bad("no bins")) } else { Ok(()) }
//!     }
//!     fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
//!         let (x, bins) = cx.view2(self.x, self.bins)?;
//!         for i in cx.lane_range(x.len()) {
//!             let v = x.read(i)?;
//!             bins.atomic_add(v % bins.len(), 1)?;
//!         }
//!         Ok(x.len() as u64)
//!     }
//! }
//!
//! resident_device::task_set! {
//!     /// The histogram and the built-in tasks.
//!     pub struct MyTasks: resident_device::Builtins { Histogram }
//! }
//! ```
//!
//! What a task may rely on, and what it must not do:
//! - it runs on one warp (32 lanes on a GPU, one on the CPU backend); every lane calls
//!   `run` with the same arguments, read in place from the queue;
//! - lanes may return different results: a failure in any lane fails the task (the
//!   first failing lane's status), else lane 0's result is the task's;
//! - memory is reached only through the context: buffer slices, checked against the
//!   runtime's buffer table ([`TaskCx::view`]), counters, this warp's scratch shared
//!   memory, and pushes of follow-up tasks;
//! - tasks that run at the same time and write the same elements race, as two CUDA
//!   kernels would: use the atomic operations for shared results;
//! - warp-collective calls (`sync_warp`, `warp_sum_*`, `broadcast`, `spawn`, `signal`)
//!   must be reached by every lane: check what may fail first, uniformly, and do not
//!   return from some lanes before a collective the others will reach (as for CUDA's
//!   `__syncwarp`: lanes waiting at different barriers hang the warp);
//! - a panic traps: on a GPU the persistent kernel dies (every ticket fails with a
//!   device fault), on the CPU backend the worker threads stop the same way. Return an
//!   error status instead; views never panic.

mod cx;
mod declared;
mod set;
mod view;
mod warp;

pub use cx::{Lookup, TaskCx};
pub(crate) use declared::Declared;
pub use set::{NoTasks, TaskSet, check_ids, concat_ids, declare_as, fingerprint, fits, relay_as, run_as};
pub use view::{AtomicElement, View};
pub use warp::WarpNum;

use resident_shared::{ArgError, Declare, Status, TASK_ARG_BYTES, Task, TaskId};

/// A task type: its arguments (`Self`, any `Pod` struct of at most [`TASK_ARG_BYTES`]
/// bytes, aligned to at most 16), its id, its declaration and its code. Compiled twice:
/// for the GPU (the persistent kernel) and for the host (the CPU backend's workers, and
/// the host's check of `declare` before submission).
pub trait DeviceTask: bytemuck::Pod {
    /// Unique within any set that holds the type (checked at compile time by
    /// [`crate::task_set!`]). See [`TaskId`] for the ranges.
    const ID: TaskId;

    /// The task carries raw addresses or injects faults: the host accepts it only from
    /// `Batch::submit_unchecked` (an `unsafe` call, whose caller vouches for the arguments),
    /// and the device refuses it as a pushed child (`InvalidOpcode`). Its `run` may rely
    /// on that caller's promise.
    const UNCHECKED: bool = false;

    /// The task touches no memory that the host wrote (no buffer, no counter): the relay
    /// warp may run it without its acquire fence (see [`DeviceTask::on_relay`]).
    const PURE: bool = false;

    /// Whether the device holds each run to the task's declaration (the default:
    /// [`DeclarationCheck::HELD`]), or the type's author vouches for it
    /// ([`DeclarationCheck::vouched`], an `unsafe` promise).
    const DECLARATION_CHECK: DeclarationCheck = DeclarationCheck::HELD;

    /// What this task touches, and whether its arguments are consistent: every slice it
    /// will resolve with [`TaskCx::view`] (and its children's, if it pushes any), the
    /// counters in its arguments, the task types it may push. Called on the host before
    /// the task is submitted; each declared slice must name a live buffer of its element
    /// type and lie within it, each counter must be live, each pushed type must be in the
    /// runtime's set, or the whole batch is refused with a typed error. Run again on the
    /// device before each run, whose accesses are held to it ([`DeclarationCheck`]), and
    /// for arguments no host saw (pushed children, `Batch::submit_unchecked`): it must be a
    /// function of the arguments alone (the same items on the host and on the device) and
    /// must not panic (a panic there traps, as in `run`). Its `Err` is the host's to act
    /// on: the device holds the task to the items declared before it.
    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError>;

    /// Runs the task on the calling warp (every lane calls). `Ok(result)`: the task's
    /// inline result (lane 0's); `Err(status)`: it failed, and touched what it touched.
    fn run(&self, cx: &TaskCx) -> Result<u64, Status>;

    /// Whether the relay warp may ever run tasks of this type itself, when one is
    /// submitted alone (the latency path: docs/protocol.md, step 3b). Only for tasks
    /// that take about a microsecond at most: the relay stalls the batches behind it
    /// meanwhile. The relay kernel's code holds only the types that say so.
    const RELAY: bool = false;

    /// Whether the relay may run this task (for a [`DeviceTask::RELAY`] type: a short
    /// one, for example).
    fn on_relay(&self) -> bool {
        Self::RELAY
    }

    /// The task record of these arguments, to submit (or push with [`TaskCx::spawn`]).
    fn task(&self) -> Task {
        Task::with_args(Self::ID, self)
    }
}

/// Whether the device holds a task type's runs to its declaration
/// ([`DeviceTask::DECLARATION_CHECK`]).
///
/// Held (the default): before a task runs, its declaration is collected; every slice it
/// resolves ([`TaskCx::view`]), every write or atomic update through a view, every
/// counter it reads or signals and every child it pushes is looked up there and refused
/// with `Status::Undeclared` if not granted. When `run` is inlined into the persistent
/// loop and touches what `declare` names, the look-ups fold away at compile time; the
/// rest cost a few comparisons each.
///
/// Vouched: no look-ups. For the built-in tasks, whose declarations and runs are
/// written together, and for a hot task whose author has checked the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeclarationCheck(bool);

impl DeclarationCheck {
    /// Every run is held to its task's declaration.
    pub const HELD: Self = Self(true);

    /// No run is held to its declaration: the type's author vouches for it.
    ///
    /// # Safety
    /// For every value of the arguments (pushed children and tasks submitted through
    /// `Batch::submit_unchecked` are not checked by the host), the type's `run` must resolve
    /// only slices that lie within ones its `declare` names, write only slices declared
    /// `write`, update atomically only slices declared `write` or `atomic`, read or
    /// signal only counters it names, and push only children of types it names whose own
    /// declarations lie within its own. A run that breaks this can reach a dropped
    /// buffer's memory after another buffer took it.
    pub const unsafe fn vouched() -> Self {
        Self(false)
    }

    /// Whether runs are held to their declaration.
    pub const fn is_held(self) -> bool {
        self.0
    }
}

/// What a task reports: a status and a small inline result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// How the task ended.
    pub status: Status,
    /// Its inline result (0 on failure).
    pub result: u64,
}

impl Outcome {
    /// Success, with `result`.
    pub const fn ok(result: u64) -> Self {
        Self { status: Status::Ok, result }
    }
    /// Failure with `status`.
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

const _: () = assert!(TASK_ARG_BYTES == 48);
