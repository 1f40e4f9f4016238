//! Device counters: the events of the device-side dependency graph.
//!
//! A [`Counter`] is a `u32` in device memory that tasks signal ([`Task::signals`]: one
//! added after the task ran) and wait on ([`Task::after`]: the task runs once the
//! counter reaches a value). Dependencies are resolved by the workers, with no host
//! round trip between the stages (ordering: `device/src/deps.rs`).
//!
//! ```
//! use resident::{Runtime, RuntimeConfig, Task};
//! let rt = Runtime::with_config(RuntimeConfig::cpu())?;
//! let stage1 = rt.counter()?;
//! let mut tasks: Vec<Task> = (0..8).map(|i| Task::noop(i).signals(stage1.id())).collect();
//! tasks.push(Task::noop(99).after(stage1.id(), 8)); // runs after all eight
//! rt.submit(&tasks)?.wait()?;
//! assert_eq!(stage1.value()?, 8);
//! # Ok::<(), resident::Error>(())
//! ```
//!
//! [`Task::signals`]: resident_shared::Task::signals
//! [`Task::after`]: resident_shared::Task::after

use resident_shared::{CounterId, DROPPED, MAX_COUNTERS};
use std::sync::Arc;

use crate::memory::owner::Owner;
use crate::memory::reclaim::Held;
use crate::{Error, Result};

/// A device counter, zero when created. Its id is valid in tasks while it lives.
/// Dropping it ends at once every task still waiting on it (`Status::CounterDropped`),
/// even one whose signal is still queued: keep a counter until the tasks that wait on
/// it have run.
pub struct Counter {
    shared: Arc<dyn Owner>,
    id: CounterId,
}

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counter").field("index", &self.id.index).field("generation", &self.id.generation).finish()
    }
}

impl Counter {
    pub(crate) fn new(shared: Arc<dyn Owner>) -> Result<Self> {
        shared.usable()?;
        shared.reclaim();
        let mut p = shared.registries().write();
        let id = p.counters.take().ok_or(Error::TooManyCounters(MAX_COUNTERS - 1))?;
        // Zero, and not dropped, before any task that names it can be published: the
        // copies complete before this returns, under the registries' write lock.
        let reset = |word: usize| unsafe { shared.backend().upload(shared.backend().counter_addr(word), &0u32.to_ne_bytes(), 4) };
        if let Err(e) = reset(id.index as usize).and_then(|()| reset(DROPPED + id.index as usize)) {
            p.counters.give_back(id);
            drop(p);
            // The fault, if the copy failed on a dead device (as in `Buffer::new`).
            return Err(shared.explain(e));
        }
        drop(p);
        Ok(Self { shared, id })
    }

    /// The id to put in tasks.
    pub fn id(&self) -> CounterId {
        self.id
    }

    /// The counter's current value (a snapshot: tasks may be signaling it).
    pub fn value(&self) -> Result<u32> {
        let mut v = [0u8; 4];
        let addr = self.shared.backend().counter_addr(self.id.index as usize);
        // SAFETY: the counter table is backend memory; 4 bytes at a valid index.
        unsafe { self.shared.backend().download(addr, &mut v, 4) }?;
        Ok(u32::from_ne_bytes(v))
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        // As for buffers: refuse new tasks naming it at once. Tasks in flight that wait
        // on it end now with `Status::CounterDropped` (no signal would come: its
        // dropped flag, which they poll, `resident_device::deps`); the id is free again
        // once every task before the drop has completed (host/memory/reclaim.rs). Never waits.
        let target = {
            let mut r = self.shared.registries().write();
            r.counters.retire(self.id);
            self.shared.next_seq()
        };
        // SAFETY: the counter table holds a dropped flag for every id.
        let _ = unsafe {
            self.shared.backend().upload(self.shared.backend().counter_addr(DROPPED + self.id.index as usize), &1u32.to_ne_bytes(), 4)
        };
        self.shared.defer(target, Held::Counter(self.id));
    }
}
