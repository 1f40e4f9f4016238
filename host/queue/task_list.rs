//! Resident task lists: tasks validated once and kept in device memory, submitted again
//! and again, read in place by the workers (list runs, device/src/lists.rs). What a
//! captured CUDA Graph is to launches, a task list is to the persistent queue: the
//! per-submission host work (validation, staging, a host-to-device copy) is paid once,
//! at upload.

use resident_shared::Task;
use std::sync::Arc;

use crate::Result;
use crate::backend::Memory;
use crate::backend::placement::Placement;
use crate::image::validate::Names;
use crate::memory::reclaim::Held;
use crate::runtime::Shared;

/// A batch of tasks validated once and kept in device memory ([`crate::Runtime::upload_tasks`]),
/// submitted again and again with [`crate::Runtime::submit_list`].
pub struct TaskList {
    /// `None` once dropped (taken to host/memory/reclaim.rs).
    mem: Option<Memory>,
    len: usize,
    /// Every buffer and counter the tasks name, re-checked at each submission.
    names: Names,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for TaskList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskList").field("len", &self.len).field("buffers", &self.names.buffers.len()).finish()
    }
}

impl TaskList {
    pub(crate) fn upload(shared: &Arc<Shared>, tasks: &[Task]) -> Result<Self> {
        shared.usable()?;
        {
            let r = shared.registries.read();
            crate::image::validate::validate(tasks, &shared.set, &r.registry, &r.counters)?;
        }
        // Every buffer and counter the tasks name, re-checked at each submission.
        let names = Names::of(tasks, &shared.set);
        let len = u32::try_from(tasks.len()).map_err(|_| crate::Error::BatchTooLarge(tasks.len()))?;
        // Stored already placed: a list is always submitted whole, as one batch, so its
        // segments are fixed relative to its start and the replay copy needs no patch.
        let place = Placement::batch(len, 0, shared.tracker.segment_size());
        let placed: Vec<Task> = tasks.iter().enumerate().map(|(i, t)| place.apply(i, t)).collect();
        // Driver calls: on a device that faulted unseen, the fault (as in `Buffer::new`).
        let mem = shared.backend.alloc(size_of_val(tasks)).map_err(|e| shared.explain(e))?;
        // SAFETY: `mem` holds exactly the tasks' bytes.
        unsafe { shared.backend.upload(mem.addr(), bytemuck::cast_slice(&placed), 8) }.map_err(|e| shared.explain(e))?;
        Ok(Self { shared: shared.clone(), mem: Some(mem), len: tasks.len(), names })
    }

    /// Tasks in the list.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it holds no task.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub(crate) fn addr(&self) -> u64 {
        self.mem.as_ref().expect("live until drop").addr()
    }
    /// The runtime it was uploaded to.
    pub(crate) fn owner(&self) -> &Arc<Shared> {
        &self.shared
    }
    pub(crate) fn names(&self) -> &Names {
        &self.names
    }
}

impl Drop for TaskList {
    fn drop(&mut self) {
        // The workers read the list's tasks in place until they complete: its memory
        // stays until everything submitted so far has (host/memory/reclaim.rs). Never waits.
        let target = self.shared.producer.lock().unwrap_or_else(|e| e.into_inner()).next;
        self.shared.defer(target, Held::List(self.mem.take()));
    }
}
