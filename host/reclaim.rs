//! What dropped buffers, counters and task lists leave behind until no task can touch
//! them: a drop never waits (issue 21: a drop behind a hung or waiting task blocked its
//! caller for 30 s). It takes the thing out of the registries at once, so no later task
//! can name it, and leaves what tasks in flight may still use (the memory, the table
//! entry, the counter id) here with the sequence number that every such task lies
//! before. It is released once everything before that has completed, by the next
//! allocation, drop or shutdown that looks ([`Shared::reclaim`]), or never, if workers
//! that would not leave may still use it (`Lifecycle::leaked`).
//!
//! What it does not own: the decision that a task can no longer run (the completion
//! tracker's `completed`), the registries' own bookkeeping (`BufferRegistry::release`,
//! `CounterRegistry::give_back`).

use resident_shared::{BufferEntry, CounterId};

use crate::backend::Memory;
use crate::runtime::Shared;

/// Something a drop left for tasks in flight.
pub(crate) enum Held {
    /// A buffer's memory and its table entry (index), which tasks in flight read.
    Buffer { index: usize, mem: Option<Memory> },
    /// A counter id, which tasks in flight may wait on or signal.
    Counter(CounterId),
    /// A task list's memory, which the workers read its tasks from.
    List(Option<Memory>),
}

#[derive(Default)]
pub(crate) struct Reclaim {
    /// (every task that may use it lies before this sequence number, what it is).
    pending: std::sync::Mutex<Vec<(u64, Held)>>,
}

impl Reclaim {
    /// Everything still held, for a runtime that must never free it (workers that did
    /// not leave): forgotten.
    pub fn leak_all(&self) {
        let held = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        std::mem::forget(held);
    }
}

impl Shared {
    /// Holds `held` until every task before `target` has completed, then releases it;
    /// at once if that is so already (or the workers are gone).
    pub fn defer(&self, target: u64, held: Held) {
        self.reclaim.pending.lock().unwrap_or_else(|e| e.into_inner()).push((target, held));
        self.reclaim();
    }

    /// Releases whatever no task can touch any more. Never waits.
    pub fn reclaim(&self) {
        if self.life.leaked() {
            return;
        }
        // Only a permanent end frees regardless of completions: workers that left an
        // idle queue (elastic residency) come back at the next submission, which may
        // name what is pending here; their exit already implies `done` past every
        // earlier target.
        let gone = self.life.is_stopped() && !self.life.leaked();
        let done = self.tracker.advance(&self.backend);
        let free: Vec<Held> = {
            let mut p = self.reclaim.pending.lock().unwrap_or_else(|e| e.into_inner());
            if p.is_empty() {
                return;
            }
            let (free, keep) = std::mem::take(&mut *p).into_iter().partition(|(target, _)| gone || *target <= done);
            *p = keep;
            free.into_iter().map(|(_, h)| h).collect()
        };
        if free.is_empty() {
            return;
        }
        let _ = self.bind();
        let mut r = self.registries.write();
        for held in free {
            match held {
                Held::Buffer { index, mem } => {
                    // The entry goes before the index is free again: a new buffer there
                    // writes its own after this (under the same lock).
                    let _ = self.backend.set_buffer_entry(index, BufferEntry::EMPTY);
                    r.registry.release(index);
                    drop(mem);
                }
                Held::Counter(id) => r.counters.give_back(id),
                Held::List(mem) => drop(mem),
            }
        }
    }
}
