//! The host's view of a task set (`resident_device::TaskSet`): its ids, its
//! declarations (for [`crate::validate`]), and its persistent loop compiled for the host
//! (the CPU backend's workers). Function pointers, so that a runtime is not generic
//! over its set: the set comes with the kernel image it loads.

use resident_device::TaskSet;
use resident_shared::{ArgError, Declare, KernelParams, Task, TaskId};

#[derive(Clone, Copy)]
pub(crate) struct SetInfo {
    pub name: &'static str,
    pub ids: &'static [TaskId],
    pub declare: fn(&Task, &mut Declare<'_>) -> Option<Result<(), ArgError>>,
    /// The persistent loop over the set, for the CPU backend's worker threads.
    pub cpu_loop: unsafe fn(&KernelParams),
}

impl SetInfo {
    pub fn of<S: TaskSet>() -> Self {
        Self { name: S::NAME, ids: S::IDS, declare: S::declare, cpu_loop: resident_device::entry::persistent::<S> }
    }
}

impl std::fmt::Debug for SetInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSet").field("name", &self.name).field("ids", &self.ids).finish()
    }
}
