//! Device code of `resident`: everything that runs on the GPU, and the API a device
//! crate of your own uses to add tasks.
//!
//! The same sources compile for two targets. For `nvptx64-nvidia-cuda` (through the
//! build helper, `resident-build`) they become the persistent kernel; for the host they
//! are the CPU backend's workers, which run the identical loop and task code with a
//! "warp" of one lane. Only [`arch`] differs between the two.
//!
//! For your own tasks (docs/custom-tasks.md walks through it): an argument struct and a
//! [`DeviceTask`] implementation per task type, a set declared with [`task_set!`]
//! (including [`Builtins`] if you want them), and `resident-build` in your host crate's
//! build script to compile the set into a kernel image. Ordinary kernels beside the
//! tasks implement [`DeviceKernel`].
//!
//! Public, for a task author: the task API ([`task`]: [`DeviceTask`], [`TaskCx`],
//! [`View`], [`TaskSet`]), the built-in tasks ([`builtin`]) and kernels ([`kernels`]),
//! and the arch layer ([`arch`]: lanes, warp collectives, shared memory, the clock).
//! Private: the runtime that runs them, the queue's consumer side (`queue`), completion
//! counting (`completion`), device-side dependencies (`deps`), the spawn ring (`spawn`),
//! the persistent loop (`worker`); hidden, for the crates `resident-build` generates
//! and the CPU backend: the entry points (`entry`). Does not own: layouts (in
//! `resident-shared`) or anything the host does.
#![no_std]
#![warn(missing_docs)]
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch, link_llvm_intrinsics, stdarch_nvptx))]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod arch;
pub(crate) mod buffers;
pub mod builtin;
pub(crate) mod completion;
pub(crate) mod deps;
#[doc(hidden)]
pub mod entry;
#[cfg(target_arch = "nvptx64")]
pub(crate) mod inbox;
pub(crate) mod kernel;
pub mod kernels;
pub(crate) mod link;
pub(crate) mod lists;
pub mod math;
pub(crate) mod queue;
#[cfg(target_arch = "nvptx64")]
pub(crate) mod relay;
pub(crate) mod spawn;
pub(crate) mod steps;
pub mod task;
pub(crate) mod worker;

pub use builtin::Builtins;
pub use kernel::DeviceKernel;
pub use resident_shared as shared;
pub use resident_shared::{ArgError, CounterId, Declare, Element, Slice, Status, Task, TaskId, inline_result};
pub use task::{AtomicElement, DeclarationCheck, DeviceTask, TaskCx, TaskSet, View, WarpNum};
