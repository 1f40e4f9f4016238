//! The registries: which buffers and counters are live, as tasks are checked against
//! them (`host/image/validate.rs`) and as the device's tables say. Read by producers (under
//! the runtime's read-mostly lock, host/util/read_mostly.rs, from validation until the
//! reservation), written when a
//! buffer or counter is made, retired by a drop, or released (`host/memory/reclaim.rs`).
//!
//! Identity across the process: a buffer handle (index, generation) is handed out once
//! per process by any runtime (per-index generations, shared by all), and a counter id is
//! live in at most one runtime at a time (one pool of free ids): so one runtime never
//! accepts another's handle, and a stale one never names a live buffer.
//!
//! What it does not own: the memory (`Buffer`, `host/memory/reclaim.rs`) and the device's copy
//! of the buffer table (the backend), which the callers write under the same lock.

use resident_shared::{BufSlice, BufferEntry, BufferHandle, CounterId, ElemType, MAX_BUFFERS, MAX_COUNTERS};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU16, Ordering};

use crate::{Error, Result};

/// The live buffers and counters, as tasks are checked against them: read by
/// producers (until their reservation is made), written when a buffer or counter is
/// made or dropped.
pub(crate) struct Registries {
    pub registry: BufferRegistry,
    pub counters: CounterRegistry,
}

impl Registries {
    pub fn new() -> Self {
        Self { registry: BufferRegistry::new(), counters: CounterRegistry::new() }
    }
}

/// The generation last handed out at each table index, for the whole process: every
/// runtime takes a new one from here when it registers a buffer at that index. So a
/// handle (index, generation) is handed out once per process, never again: a handle of
/// another runtime, or of a dropped buffer, never names a live buffer, however many are
/// made and dropped. An index whose 65,535 generations are used up is retired for good,
/// by every runtime: after about 2^32 buffers in one process, new ones are refused with
/// `Error::TooManyBuffers` rather than reuse a handle.
static GENERATIONS: [AtomicU16; MAX_BUFFERS] = [const { AtomicU16::new(0) }; MAX_BUFFERS];

/// A generation for a new buffer at `index` (never 0, never one handed out before), or
/// `None` if the index is used up.
fn next_generation(index: u16) -> Option<u16> {
    // Relaxed: uniqueness needs only the atomicity of the update; what the generation
    // guards (the table entry) is published under the registries' lock.
    let mut g = GENERATIONS[index as usize].load(Ordering::Relaxed);
    loop {
        let n = g.checked_add(1)?;
        match GENERATIONS[index as usize].compare_exchange_weak(g, n, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return Some(n),
            Err(now) => g = now,
        }
    }
}

/// The host's copy of the buffer table: which handles are live, with which generation.
pub(crate) struct BufferRegistry {
    entries: Vec<BufferEntry>,
    free: Vec<u16>,
}

impl BufferRegistry {
    pub fn new() -> Self {
        Self { entries: vec![BufferEntry::EMPTY; MAX_BUFFERS], free: (0..MAX_BUFFERS).rev().map(|i| i as u16).collect() }
    }

    pub fn register(&mut self, ptr: u64, len: u32, elem: ElemType) -> Result<BufferHandle> {
        loop {
            let index = self.free.pop().ok_or(Error::TooManyBuffers(MAX_BUFFERS))?;
            // An index whose generations are used up is not given back to `free`.
            let Some(generation) = next_generation(index) else { continue };
            self.entries[index as usize] = BufferEntry { ptr, len, elem: elem.0, generation };
            return Ok(BufferHandle::new(index, generation));
        }
    }

    /// Undoes a registration whose buffer was never handed out.
    pub fn unregister(&mut self, h: BufferHandle) {
        if self.entry(h).is_some() {
            self.retire(h);
            self.release(h.index());
        }
    }

    /// No task may name `h` from now on; its index is not free yet (tasks in flight
    /// may still read its table entry: [`BufferRegistry::release`] frees it).
    pub fn retire(&mut self, h: BufferHandle) {
        if self.entry(h).is_some() {
            self.entries[h.index()] = BufferEntry::EMPTY;
        }
    }

    /// Index `index`, retired, is free for a new buffer.
    pub fn release(&mut self, index: usize) {
        self.free.push(index as u16);
    }

    /// Whether `slice` names a live buffer of `elem` and lies within it (the check of
    /// a task's declared slice, with no entry copied out).
    #[inline(always)]
    pub fn holds(&self, slice: BufSlice, elem: ElemType) -> bool {
        self.entries.get(slice.handle.index()).is_some_and(|e| e.names(slice, elem) && e.contains(slice))
    }

    /// The live entry a handle names, if its generation matches.
    pub fn entry(&self, h: BufferHandle) -> Option<BufferEntry> {
        let e = *self.entries.get(h.index())?;
        (e.ptr != 0 && e.generation as u32 == h.generation()).then_some(e)
    }
}

/// The counter indices not live in any runtime of the process, oldest first, and the
/// generation each was last handed out with: a runtime takes the front index with its
/// next generation when it makes a counter, and gives the index back at the end once
/// no task can name it. So a counter id (index, generation) is handed out once per
/// process: an id of another runtime, or of a dropped counter, never names a live
/// counter. An index whose 65,535 generations are used up is not given back: after
/// about 2^32 counters made in one process, new ones are refused (`TooManyCounters`).
static FREE_IDS: Mutex<Option<(VecDeque<u16>, Vec<u16>)>> = Mutex::new(None);

fn with_free<R>(f: impl FnOnce(&mut VecDeque<u16>, &mut Vec<u16>) -> R) -> R {
    let mut free = FREE_IDS.lock().unwrap_or_else(|e| e.into_inner());
    // Index 0 means "no counter" and is never handed out.
    let (queue, generations) = free.get_or_insert_with(|| ((1..MAX_COUNTERS).map(|i| i as u16).collect(), vec![0; MAX_COUNTERS]));
    f(queue, generations)
}

/// Which counter ids are live in this runtime: the generation of each live index (0:
/// not live).
pub(crate) struct CounterRegistry {
    live: Vec<u16>,
}

impl CounterRegistry {
    pub fn new() -> Self {
        Self { live: vec![0; MAX_COUNTERS] }
    }

    /// Whether `id` names a live counter of this runtime (index and generation).
    pub fn is_live(&self, id: CounterId) -> bool {
        id.generation != 0 && self.live.get(id.index as usize).is_some_and(|&g| g == id.generation)
    }

    pub(crate) fn take(&mut self) -> Option<CounterId> {
        let id = with_free(|queue, generations| {
            let index = queue.pop_front()?;
            // Never 0, never one handed out before: the index leaves the pool for good
            // when its last generation is taken (`give_back`).
            generations[index as usize] += 1;
            Some(CounterId::new(index, generations[index as usize]))
        })?;
        self.live[id.index as usize] = id.generation;
        Some(id)
    }

    /// No new task may name `id`; it is not yet free.
    pub(crate) fn retire(&mut self, id: CounterId) {
        if self.is_live(id) {
            self.live[id.index as usize] = 0;
        }
    }

    pub(crate) fn give_back(&mut self, id: CounterId) {
        self.retire(id);
        with_free(|queue, generations| {
            if generations[id.index as usize] < u16::MAX {
                queue.push_back(id.index);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index is retired once its generations are used up; the next buffer goes to
    /// another index, and no handle is handed out twice.
    #[test]
    fn used_up_indices_are_retired() {
        let mut r = BufferRegistry::new();
        let first = r.register(256, 4, ElemType::F32).unwrap();
        r.unregister(first);
        // Use up the generations of that index (shared by the process: set directly).
        GENERATIONS[first.index()].store(u16::MAX, Ordering::Relaxed);
        let next = r.register(256, 4, ElemType::F32).unwrap();
        assert_ne!(next.index(), first.index());
        assert!(r.entry(first).is_none());
        r.unregister(next);
        assert!(!r.free.contains(&(first.index() as u16)), "a used-up index went back to the free list");
    }
}
