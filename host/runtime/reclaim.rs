//! The runtime's passes over what drops left for tasks in flight
//! (`crate::memory::reclaim`, whose module doc has the steps): each frees what no task
//! can touch any more, from the completions, the registries, the backend's table and
//! the reservations, which meet here.

use resident_shared::BufferEntry;

use crate::memory::reclaim::Held;
use crate::runtime::Shared;

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
