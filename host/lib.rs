//! # resident
//!
//! A persistent-threads work-queue runtime for NVIDIA GPUs. One kernel is launched once
//! and stays resident; its warps claim tasks from a queue in device memory with atomic
//! increments and run them, so thousands of small tasks cost no kernel launch each. The
//! host stages batches in pinned memory, a transfer stream copies them into the ring and
//! publishes a new `tail`, and the workers write completion records back into mapped
//! pinned memory. Device code is Rust (the `resident-device` crate), compiled to PTX at
//! build time. Without a GPU, the same device code runs on CPU worker threads.
//!
//! 1. Create a runtime; it says which backend it chose.
//!    ```
//!    let rt = resident::Runtime::new()?;
//!    println!("{}", rt.backend());
//!    # Ok::<(), resident::Error>(())
//!    ```
//! 2. Allocate buffers, build tasks that name slices of them, submit, wait.
//!    ```
//!    # let rt = resident::Runtime::with_config(resident::RuntimeConfig::cpu())?;
//!    use resident::Task;
//!    let x = rt.buffer_from(&vec![1.0f32; 4096])?;
//!    let y = rt.buffer_from(&vec![0.5f32; 4096])?;
//!    let tasks: Vec<Task> = (0..4).map(|i| Task::axpy(2.0, x.slice(i * 1024..(i + 1) * 1024), y.slice(i * 1024..(i + 1) * 1024))).collect();
//!    rt.submit(&tasks)?.wait()?;
//!    assert!(y.read()?.iter().all(|&v| v == 2.5));
//!    # Ok::<(), resident::Error>(())
//!    ```
//! 3. Read inline results, or handle typed errors.
//!    ```
//!    # let rt = resident::Runtime::with_config(resident::RuntimeConfig::cpu())?;
//!    use resident::{Error, Task};
//!    let t = rt.batch(&[Task::noop(7), Task::noop(8)]).results().submit()?;
//!    assert_eq!(t.results()?, vec![7, 8]);
//!    assert!(matches!(rt.submit(&[Task::raw(999, [0; 12])]), Err(Error::InvalidTask { index: 0, .. })));
//!    # Ok::<(), resident::Error>(())
//!    ```
//!
//! Layers, top down (each folder of host/ is one): `runtime` (the [`Runtime`] facade,
//! its configuration and lifecycle), `queue` (submission, reservations, [`Ticket`]s,
//! task lists), `memory` ([`Buffer`]s, counters, registries, reclaim), `image` (kernel
//! images and the checks of tasks against their set), `multi` (links, NCCL, the
//! launcher), `backend` (the CUDA and CPU backends), `driver` (RAII over the CUDA
//! driver), `util`; [`stream`] is the stream API beside them. `resident-device` and
//! `resident-shared` are the device code and the shared layouts. docs/architecture.md
//! describes the protocol and its memory orderings.
#![warn(missing_docs)]

mod backend;
mod driver;
mod error;
mod image;
mod memory;
mod multi;
mod queue;
mod runtime;
pub mod stream;
mod util;

/// NCCL collectives between runtimes' buffers.
pub use multi::nccl;

pub use backend::BackendInfo;
pub use backend::kind::BackendKind;
pub use error::{Error, Rejection, Result};
pub use image::KernelImage;
#[doc(hidden)]
pub use image::{__CpuKernelFn, __CpuKernelRow, __ImageParts, __cpu_kernel, __cpu_kernel_param_bytes};
pub use memory::buffer::Buffer;
pub use memory::counter::Counter;
pub use multi::launcher::{LaunchEnv, rendezvous};
pub use multi::link::{Link, LinkStats};
pub use queue::batch::Batch;
/// Per-phase submission timings since the last call (feature `phase-timing`).
#[cfg(feature = "phase-timing")]
#[doc(hidden)]
pub use queue::phases::take as __phases_take;
pub use queue::reservation::Reservation;
pub use queue::task_list::TaskList;
pub use queue::ticket::{Ticket, TicketFuture, WaitFuture};
/// The device-side task API, for `.task()` on a task type's arguments (the rest of it is
/// `resident_device`'s, for device crates).
pub use resident_device::{DeviceTask, TaskSet};
pub use resident_shared::link::LinkId;
/// The persistent loop's steps that a profiling build counts (`Probe::device_steps`).
#[doc(hidden)]
pub use resident_shared::steps;
/// Worker policy bits (`RuntimeConfig::worker_flags`): measurement switches.
#[doc(hidden)]
pub use resident_shared::worker_flags;
pub use resident_shared::{
    Access, AccessMode, ArgError, BufSlice, BufferHandle, COLLECTED, Completion, CounterId, Declare, ElemType, Element, OneTaskParams,
    Slice, Status, TASK_ARG_BYTES, Task, TaskId, builtin,
};
pub use runtime::builder::RuntimeBuilder;
pub use runtime::config::RuntimeConfig;
pub use runtime::metrics::RuntimeMetrics;
pub use runtime::partition::SmPartition;
pub use runtime::policy::{Residency, ResidencyStats};
#[doc(hidden)]
pub use runtime::probe::Probe;
pub use runtime::sharing::Sharing;
pub use runtime::{Runtime, cuda_available, cuda_driver_version, device_count};
pub use util::accounting::{LiveAllocations, live_allocations};
