//! Resident task lists: tasks validated once and kept in device memory, submitted again
//! and again, read in place by the workers (list runs, device/src/lists.rs). What a
//! captured CUDA Graph is to launches, a task list is to the persistent queue: the
//! per-submission host work (validation, staging, a host-to-device copy) is paid once,
//! at upload.

use resident_shared::{MAX_LIST_CHUNK, Task};
use std::sync::Arc;

use crate::Result;
use crate::backend::Memory;
use crate::backend::placement::Placement;
use crate::image::validate::Names;
use crate::memory::reclaim::Held;
use crate::queue::producer::{self, Origin, Source, WhenFull};
use crate::runtime::Shared;

/// A batch of tasks validated once and kept in device memory ([`crate::Runtime::upload_tasks`]),
/// submitted again and again with [`TaskList::submit`], to the runtime that uploaded it.
///
/// A list whose tasks wait on no counter is submitted in chunks: one queue slot (a
/// [`Task::list_chunk`] record, kept after the tasks) stands for up to
/// [`resident_shared::MAX_LIST_CHUNK`] consecutive tasks, which the warp that claims it
/// runs one after another and counts with one completion (docs/protocol.md 4c). A list of `n` tasks over `w` workers takes chunks of `ceil(n / w)` tasks
/// ([`crate::RuntimeConfig::list_slot_tasks`]), so it spreads over every worker once
/// with one claim and one completion each.
pub struct TaskList {
    /// `None` once dropped (taken to host/memory/reclaim.rs).
    mem: Option<Memory>,
    len: usize,
    /// Tasks per queue slot (1: the tasks themselves are the slots).
    per_slot: u32,
    /// Every buffer and counter the tasks name, re-checked at each submission.
    names: Names,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for TaskList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskList")
            .field("len", &self.len)
            .field("per_slot", &self.per_slot)
            .field("buffers", &self.names.buffers.len())
            .finish()
    }
}

/// Tasks per queue slot for a list of `len` tasks over `workers` workers: `configured`
/// if set, else `ceil(len / workers)`; at most `MAX_LIST_CHUNK`, and 1 if a task waits
/// on a counter (a chunk's tasks run back to back in one warp, and a wait there could
/// hold later tasks of the chunk behind a counter that only they would signal).
fn per_slot(tasks: &[Task], workers: u32, configured: u32) -> u32 {
    if tasks.iter().any(|t| t.wait_counter != 0) {
        return 1;
    }
    let auto = (tasks.len() as u64).div_ceil(workers.max(1) as u64).min(MAX_LIST_CHUNK as u64) as u32;
    if configured == 0 { auto.max(1) } else { configured.min(MAX_LIST_CHUNK) }
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
        let configured = if shared.set.list_chunks { shared.config.list_slot_tasks } else { 1 };
        let per_slot = per_slot(tasks, shared.backend.info().workers, configured);
        let slots = len.div_ceil(per_slot);
        let size = size_of::<Task>();
        // Driver calls: on a device that faulted unseen, the fault (as in `Buffer::new`).
        let bytes = size_of_val(tasks) + if per_slot > 1 { slots as usize * size } else { 0 };
        let mem = shared.backend.alloc(bytes).map_err(|e| shared.explain(e))?;
        // Stored already placed: a list is always submitted whole, as one batch, so its
        // segments are fixed relative to its start and the replay copy needs no patch.
        // Chunked, the slots are the chunk records (after the tasks): they are placed,
        // and the tasks inside belong to no segment of their own.
        let place = Placement::batch(slots, 0, shared.tracker.segment_size());
        let image: Vec<Task> = if per_slot == 1 {
            tasks.iter().enumerate().map(|(i, t)| place.apply(i, t)).collect()
        } else {
            // As placed but with no segment: flags cleared (a task's type tag, which
            // placement overwrites, would read as flags).
            let mut v: Vec<Task> = tasks.iter().map(|t| Task { flags: 0, seg: 0, ..*t }).collect();
            v.extend((0..slots).map(|k| {
                let from = k * per_slot;
                let count = per_slot.min(len - from);
                place.apply(k as usize, &Task::list_chunk(mem.addr() + from as u64 * size as u64, count))
            }));
            v
        };
        // SAFETY: `mem` holds exactly the image's bytes.
        unsafe { shared.backend.upload(mem.addr(), bytemuck::cast_slice(&image), 8) }.map_err(|e| shared.explain(e))?;
        Ok(Self { shared: shared.clone(), mem: Some(mem), len: tasks.len(), per_slot, names })
    }

    /// Tasks in the list.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it holds no task.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Submits the list to the runtime that uploaded it: the workers read its tasks in
    /// place, from device memory (list runs, docs/protocol.md step 4l): no staging, no
    /// copy of tasks. The buffers it names are checked to be still live; the device
    /// checks every slice again. Fails like [`crate::Runtime::submit`] once that
    /// runtime is shut down or faulted.
    pub fn submit(&self) -> Result<crate::Ticket> {
        let src = Source::Resident { addr: self.addr(), len: self.slots(), per_slot: self.per_slot, tasks: self.len, names: &self.names };
        let state = producer::submit(&self.shared, src, false, WhenFull::Wait, Origin::User)?;
        Ok(crate::Ticket { state, shared: self.shared.clone() })
    }

    /// Where its queue slots lie: the tasks, or the chunk records after them.
    pub(crate) fn addr(&self) -> u64 {
        let mem = self.mem.as_ref().expect("live until drop").addr();
        if self.per_slot == 1 { mem } else { mem + (self.len * size_of::<Task>()) as u64 }
    }
    /// Queue slots a submission takes.
    pub(crate) fn slots(&self) -> usize {
        self.len.div_ceil(self.per_slot as usize)
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
