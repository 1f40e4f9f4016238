//! A reader-writer lock for data that every submission reads and almost nothing writes
//! (the registries of buffers and counters): a reader writes only its own stripe's
//! count, one cache line of a few, instead of one lock word that every producer writes
//! twice a batch (`std::sync::RwLock`: under four producers the read lock cost
//! 0.16-0.22 µs a batch against 0.06 for one, measured with the `phase-timing` build).
//! A writer (a buffer or counter made or dropped) announces itself, then waits until
//! every stripe's readers have left; readers that arrive meanwhile step back and wait
//! for it (the writer goes first: a stream of readers does not starve it).
//!
//! Ordering (the big-reader lock's handshake): a reader adds itself to its stripe, then
//! reads `writer`; a writer sets `writer`, then reads every stripe; each side has a
//! SeqCst fence between its store and its loads, so at least one sees the other: the
//! reader steps back, or the writer waits for it. A reader that finds no writer
//! acquires the last writer's release of `writer`, so it sees what that writer wrote; a
//! writer that finds a stripe empty acquires its readers' releases, so their reads
//! happen before its writes. Modelled by loom below (readers and a writer racing, the
//! data in a loom cell that flags any access not ordered by the lock), which fails
//! with either fence taken out.
//!
//! Not reentrant (as `RwLock`): a thread that holds a read guard and asks for another
//! may wait for a writer that waits for it.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};

use crossbeam::utils::CachePadded;

use crate::util::sync::Mutex;
use crate::util::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};

/// Reader stripes: threads take them round robin (`crate::util::striped::stripe`); two
/// threads on one stripe are still correct.
const STRIPES: usize = crate::util::striped::STRIPES;

pub(crate) struct ReadMostly<T> {
    /// Readers inside, by stripe.
    readers: [CachePadded<AtomicUsize>; STRIPES],
    /// A writer is inside or waiting for the readers to leave.
    writer: CachePadded<AtomicBool>,
    /// One writer at a time.
    writers: Mutex<()>,
    value: UnsafeCell<T>,
}

// SAFETY: the value is shared between threads only as the lock allows (shared reads
// under read guards, one writer alone), as `RwLock<T>`'s bounds require.
unsafe impl<T: Send> Send for ReadMostly<T> {}
unsafe impl<T: Send + Sync> Sync for ReadMostly<T> {}

pub(crate) struct ReadGuard<'a, T> {
    lock: &'a ReadMostly<T>,
    stripe: usize,
}

pub(crate) struct WriteGuard<'a, T> {
    lock: &'a ReadMostly<T>,
    _writers: crate::util::sync::MutexGuard<'a, ()>,
}

impl<T> ReadMostly<T> {
    pub fn new(value: T) -> Self {
        Self {
            readers: std::array::from_fn(|_| CachePadded::new(AtomicUsize::new(0))),
            writer: CachePadded::new(AtomicBool::new(false)),
            writers: Mutex::new(()),
            value: UnsafeCell::new(value),
        }
    }

    /// Enters as a reader if no writer is inside or waiting.
    pub fn try_read(&self) -> Option<ReadGuard<'_, T>> {
        let stripe = crate::util::striped::stripe();
        self.readers[stripe].fetch_add(1, Ordering::Relaxed);
        // Pairs with the fence in `write`: see the module's doc.
        fence(Ordering::SeqCst);
        // Acquire: the last writer's release of `writer` (its writes before it).
        if !self.writer.load(Ordering::Acquire) {
            return Some(ReadGuard { lock: self, stripe });
        }
        // Release: nothing read; the writer may be waiting for this count.
        self.readers[stripe].fetch_sub(1, Ordering::Release);
        None
    }

    /// Enters as a reader, after any writer inside or waiting.
    pub fn read(&self) -> ReadGuard<'_, T> {
        let mut turns = 0u32;
        loop {
            if let Some(g) = self.try_read() {
                return g;
            }
            while self.writer.load(Ordering::Relaxed) {
                crate::util::sync::back_off(&mut turns);
            }
        }
    }

    /// Enters as the only writer, once every reader has left.
    pub fn write(&self) -> WriteGuard<'_, T> {
        let writers = self.writers.lock().unwrap_or_else(|e| e.into_inner());
        self.writer.store(true, Ordering::Relaxed);
        // Pairs with the fence in `try_read`: see the module's doc.
        fence(Ordering::SeqCst);
        let mut turns = 0u32;
        for r in &self.readers {
            // Acquire: pairs with each leaving reader's release.
            while r.load(Ordering::Acquire) != 0 {
                crate::util::sync::back_off(&mut turns);
            }
        }
        WriteGuard { lock: self, _writers: writers }
    }
}

impl<T> Deref for ReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: a reader is counted in its stripe, so no writer is inside until it
        // leaves (module doc); readers only share.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> Drop for ReadGuard<'_, T> {
    fn drop(&mut self) {
        // Release: this reader's reads before a writer's writes (its acquire above).
        self.lock.readers[self.stripe].fetch_sub(1, Ordering::Release);
    }
}

impl<T> Deref for WriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the only writer, with no reader inside (`write`).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for WriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`; the guard is borrowed mutably.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for WriteGuard<'_, T> {
    fn drop(&mut self) {
        // Release: this writer's writes before the next reader's reads (which acquire
        // `writer`). Before `_writers` unlocks: the next writer sets it again.
        self.lock.writer.store(false, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Readers never see a writer's update half done, and every update lands, with
    /// readers and writers side by side.
    #[test]
    fn read_mostly_readers_beside_a_writer() {
        let lock = ReadMostly::new((0u64, 0u64));
        let (rounds, writes) = if cfg!(miri) { (20, 5) } else { (20_000, 500) };
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..rounds {
                        let g = lock.read();
                        assert_eq!(g.0, g.1, "a write seen half done");
                    }
                });
            }
            s.spawn(|| {
                for _ in 0..writes {
                    let mut g = lock.write();
                    g.0 += 1;
                    std::hint::spin_loop();
                    g.1 += 1;
                }
            });
        });
        assert_eq!(*lock.read(), (writes, writes));
    }

    /// `try_read` refuses while a writer is inside, and succeeds after.
    #[test]
    fn read_mostly_try_read_refuses_under_a_writer() {
        let lock = ReadMostly::new(1);
        let w = lock.write();
        std::thread::scope(|s| s.spawn(|| assert!(lock.try_read().is_none())).join().unwrap());
        drop(w);
        assert_eq!(lock.try_read().map(|g| *g), Some(1));
    }
}

/// loom: a reader and a writer race; the data is a loom cell, which fails the model
/// on any access the lock does not order (a reader beside the writer, or a reader that
/// does not see the writer's store before it).
#[cfg(all(test, loom))]
mod loom_read_mostly {
    use super::*;
    use loom::cell::UnsafeCell as Cell;
    use loom::sync::Arc;

    #[test]
    fn loom_read_mostly_orders_readers_and_writer() {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(3);
        b.check(|| {
            let lock = Arc::new(ReadMostly::new(Cell::new(0u64)));
            let readers: Vec<_> = (0..1)
                .map(|_| {
                    let lock = lock.clone();
                    loom::thread::spawn(move || {
                        let g = lock.read();
                        let v = g.with(|p| unsafe { *p });
                        assert!(v == 0 || v == 7);
                    })
                })
                .collect();
            {
                let g = lock.write();
                g.with_mut(|p| unsafe { *p = 7 });
            }
            for r in readers {
                r.join().unwrap();
            }
            assert_eq!(lock.read().with(|p| unsafe { *p }), 7);
        });
    }
}
