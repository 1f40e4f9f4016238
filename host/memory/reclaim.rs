//! What dropped buffers, counters and task lists leave behind until no task can touch
//! them: a drop never waits (a drop behind a hung or waiting task would block its
//! caller for as long as the task). It takes the thing out of the registries at once,
//! so no later task can declare it, and leaves what tasks in flight may still use (the
//! memory, the table entry, the counter id) here with the sequence number that every
//! such task lies before. It is released once everything before that has completed, by
//! the next allocation, drop or shutdown that looks (`Shared::reclaim`, in
//! host/runtime/reclaim.rs), or never, if workers that would not leave may still use it
//! (`Lifecycle::leaked`).
//!
//! A buffer goes in two steps, because a task may reach a buffer its declaration does
//! not name (the host checks declarations; a task whose `run` strays from its own is
//! refused by the device, but only by the table entry once the handle is dropped):
//! 1. [`Held::Buffer`]: the tasks submitted before the drop, which may have declared
//!    it, complete with the entry live.
//! 2. Then the entry is cleared, so every task published after that finds no buffer
//!    there (the clear is a synchronous write, before any later publication, which
//!    the workers acquire before they read entries); [`Held::Cleared`]: the memory
//!    stays until the tasks reserved before the clear, which may have read the live
//!    entry, complete, and until no task pushed in through a peer link can be running
//!    (those are counted in no ticket of this runtime: `Backend::peer_tasks_quiet`).
//!    Only then is the memory freed and the index given back.
//!
//! What it does not own: the decision that a task can no longer run (the completion
//! tracker's `completed`), the registries' own bookkeeping (`BufferRegistry::release`,
//! `CounterRegistry::give_back`).

use resident_shared::CounterId;

use crate::backend::Memory;

/// Something a drop left for tasks in flight.
pub(crate) enum Held {
    /// A buffer's memory and its live table entry (index), which tasks in flight read.
    Buffer { index: usize, mem: Option<Memory> },
    /// A buffer whose table entry is cleared: its memory, which tasks that read the
    /// entry before the clear may still use.
    Cleared { index: usize, mem: Option<Memory> },
    /// A counter id, which tasks in flight may wait on or signal.
    Counter(CounterId),
    /// A task list's memory, which the workers read its tasks from.
    List(Option<Memory>),
}

#[derive(Default)]
pub(crate) struct Reclaim {
    /// (every task that may use it lies before this sequence number, what it is).
    pub(crate) pending: std::sync::Mutex<Vec<(u64, Held)>>,
}

impl Reclaim {
    /// Everything still held, for a runtime that must never free it (workers that did
    /// not leave): forgotten.
    pub fn leak_all(&self) {
        let held = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        std::mem::forget(held);
    }
}
