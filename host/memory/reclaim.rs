//! What dropped buffers, counters and task lists leave behind until no task can touch
//! them: a drop never waits (a drop behind a hung or waiting task would block its
//! caller for as long as the task). It takes the thing out of the registries at once,
//! so no later task can declare it, and leaves what tasks in flight may still use (the
//! memory, the table entry, the counter id) here with the sequence number that every
//! such task lies before. It is released once everything before that has completed, by
//! the next allocation, drop or shutdown that looks ([`Shared::reclaim`]), or never, if
//! workers that would not leave may still use it (`Lifecycle::leaked`).
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

use resident_shared::{BufferEntry, CounterId};

use crate::backend::Memory;
use crate::runtime::Shared;

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
        // Twice: a buffer whose entry the first pass clears is often free at once (no
        // task was reserved since), and an idle runtime may not look again soon.
        if self.reclaim_pass() {
            self.reclaim_pass();
        }
    }

    /// One pass of [`Shared::reclaim`]; whether it cleared a buffer's entry.
    fn reclaim_pass(&self) -> bool {
        if self.life.leaked() {
            return false;
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
                return false;
            }
            let (free, keep) = std::mem::take(&mut *p).into_iter().partition(|(target, _)| gone || *target <= done);
            *p = keep;
            free.into_iter().map(|(_, h)| h).collect()
        };
        if free.is_empty() {
            return false;
        }
        let _ = self.bind();
        // Peer tasks are looked at (driver reads, with peer links) only if memory would
        // be freed now, once per pass.
        let peers_quiet = std::cell::OnceCell::new();
        let mut held_back = Vec::new();
        let mut r = self.registries.write();
        let mut cleared = Vec::new();
        for held in free {
            match held {
                Held::Buffer { index, mem } => {
                    // Step 2 (module doc): the entry goes now; a new buffer at the index
                    // writes its own only once the index is released, below or later.
                    let _ = self.backend.set_buffer_entry(index, BufferEntry::EMPTY);
                    if gone {
                        r.registry.release(index);
                        drop(mem);
                    } else {
                        cleared.push(Held::Cleared { index, mem });
                    }
                }
                Held::Cleared { index, mem } if gone || *peers_quiet.get_or_init(|| self.backend.peer_tasks_quiet()) => {
                    r.registry.release(index);
                    drop(mem);
                }
                Held::Cleared { index, mem } => held_back.push(Held::Cleared { index, mem }),
                Held::Counter(id) => r.counters.give_back(id),
                Held::List(mem) => drop(mem),
            }
        }
        if !held_back.is_empty() {
            // Their tasks have completed; a later pass looks at the peer tasks again.
            let mut p = self.reclaim.pending.lock().unwrap_or_else(|e| e.into_inner());
            p.extend(held_back.into_iter().map(|h| (done, h)));
        }
        if cleared.is_empty() {
            return false;
        }
        // Read after the clears have landed (synchronous writes): every task at or past
        // `next` is reserved after them, so published after them, and the workers'
        // acquire of its publication orders their entry loads after the clear.
        let target = self.producer.lock().unwrap_or_else(|e| e.into_inner()).next;
        drop(r);
        let mut p = self.reclaim.pending.lock().unwrap_or_else(|e| e.into_inner());
        p.extend(cleared.into_iter().map(|h| (target, h)));
        true
    }
}
