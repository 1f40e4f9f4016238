//! The host's view of a task set (`resident_device::TaskSet`): its ids, its
//! declarations (for [`crate::image::validate`]), its persistent loop compiled for the host
//! (the CPU backend's workers), and its one-task body compiled for the host (the stream
//! API's CPU `resident_one_task`). Function pointers, so that a runtime is not generic
//! over its set: the set comes with the kernel image it loads.

use resident_device::TaskSet;
use resident_shared::{ArgError, Collected, Declare, KernelParams, OneTaskParams, Task, TaskId};

use crate::image::cpu_kernels::__CpuKernelFn;
use crate::memory::registry::{BufferRegistry, CounterRegistry};

#[derive(Clone, Copy)]
pub(crate) struct SetInfo {
    pub name: &'static str,
    pub ids: &'static [TaskId],
    pub declare: fn(&Task, &mut Declare<'_>) -> Option<Result<(), ArgError>>,
    /// `declare` into a collector, monomorphized for the set: the set's dispatch and
    /// its types' declarations inline into one function, no call per item.
    pub declare_collect: fn(&Task, &mut Collected) -> Option<Result<(), ArgError>>,
    /// A batch's checks, monomorphized for the set (`validate::validate_set`).
    pub validate: fn(&[Task], &SetInfo, &BufferRegistry, &CounterRegistry) -> Result<(), crate::Error>,
    /// The persistent loop over the set, for the CPU backend's worker threads.
    pub cpu_loop: unsafe fn(&KernelParams),
    /// `resident_one_task` over the set, as a kernel of the host's kernel table (its
    /// parameter is one `OneTaskParams`): one task on a one-lane warp.
    pub cpu_one_task: __CpuKernelFn,
    /// The image's persistent loop runs list chunks (`resident_build::KernelBuild::
    /// list_chunks`; the CPU backend's loop always can): a resident list may be
    /// uploaded in chunks.
    pub list_chunks: bool,
}

/// `S::declare` into `c`.
fn declare_collect<S: TaskSet>(t: &Task, c: &mut Collected) -> Option<Result<(), ArgError>> {
    S::declare(t, &mut Declare::collect(c))
}

/// The host body of `resident_one_task` for the set `S`.
///
/// # Safety
/// `bytes` must hold a `OneTaskParams` whose buffer table and completion record are
/// valid (as for the GPU kernel).
unsafe fn one_task<S: TaskSet>(bytes: &[u8]) {
    let p: OneTaskParams = bytemuck::pod_read_unaligned(bytes);
    // SAFETY: the caller's contract.
    unsafe { resident_device::entry::one_task::<S>(&p) }
}

impl SetInfo {
    pub fn of<S: TaskSet>() -> Self {
        Self {
            name: S::NAME,
            ids: S::IDS,
            declare: S::declare,
            declare_collect: declare_collect::<S>,
            validate: crate::image::validate::validate_set::<S>,
            cpu_loop: resident_device::entry::persistent::<S>,
            cpu_one_task: one_task::<S>,
            list_chunks: true,
        }
    }
}

impl std::fmt::Debug for SetInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSet").field("name", &self.name).field("ids", &self.ids).finish()
    }
}
