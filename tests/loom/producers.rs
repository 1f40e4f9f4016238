//! loom model of concurrent producers (host/queue/producer.rs, docs/protocol.md steps
//! 1-4c) and a buffer dropped while they run (host/memory/buffer.rs `Drop`, host/memory/reclaim.rs):
//! - a producer validates under the registries' read lock and keeps it until its
//!   reservation (`next`, under the producer lock) is made;
//! - it writes its slots with no lock and publishes in sequence order (`tail`,
//!   release). The order itself is the publisher's (host/queue/publisher.rs), whose
//!   shipped code has a loom model of its own (`loom_publication_in_order_...`); here a
//!   turn counter (`committed`) stands for it, as the runtime had until 2026-11-25;
//! - the buffer's drop takes the write lock, retires it, reads `next`, and its memory is
//!   released only once every task below that `next` has completed (reclaim: the drop
//!   itself no longer waits; here the model's drop waits, which checks the same target).
//!
//! A worker runs the published tasks in order; a task that names the buffer reads it.
//! loom checks that no slot is read before it is written, that no task of a batch that
//! passed validation reads the buffer after it was freed (the read lock across the
//! reservation), and that every task runs exactly once.
//!
//! It fails (checked 2026-11-25) if the producer releases the read lock before it
//! reserves, and if the drop reads `next` before it takes the write lock: either way a
//! task validated against the live buffer runs after the free. (With the turn taken by
//! a relaxed load of `committed`, loom gives up on the spin loop instead of reporting.)
//!
//! It is a model, not the code (as `loom_protocol.rs` says of the others): the
//! runtime's producer reaches the backend through raw pointers and the CPU backend's
//! worker threads, which loom cannot instrument.

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use loom::sync::{Arc, Mutex, RwLock};
use loom::thread;

/// Producers, one task each; both name the buffer.
const PRODUCERS: usize = 2;

struct Runtime {
    /// The registries: is the buffer live?
    registry: RwLock<bool>,
    /// The producer lock: `next`.
    next: Mutex<u64>,
    /// The turn: stands for the publisher's order (see the module doc).
    committed: AtomicU64,
    /// `QueueHeader::tail` (the CPU backend's publication).
    tail: AtomicU64,
    /// The ring's slots: which producer's task (weak).
    slots: [UnsafeCell<u64>; PRODUCERS],
    /// The buffer's memory: written when it is freed, read by tasks that name it.
    buffer: UnsafeCell<u64>,
    /// Tasks completed (the tracker's prefix).
    completed: AtomicU64,
    /// Tasks that ran, per producer.
    ran: [AtomicU64; PRODUCERS],
    freed: AtomicBool,
}

impl Runtime {
    /// `producer::submit` of one task naming the buffer: `Ok(seq)` if it was accepted.
    fn submit(&self, who: u64) -> Option<u64> {
        let reg = self.registry.read().unwrap();
        if !*reg {
            return None; // refused: the buffer is gone
        }
        let first = {
            let mut next = self.next.lock().unwrap();
            let first = *next;
            *next += 1;
            first
        };
        drop(reg);
        self.slots[first as usize].with_mut(|p| unsafe { *p = who + 1 });
        while self.committed.load(Ordering::Acquire) != first {
            thread::yield_now();
        }
        self.tail.store(first + 1, Ordering::Release);
        self.committed.store(first + 1, Ordering::Release);
        Some(first)
    }

    /// The buffer's `Drop`.
    fn drop_buffer(&self) {
        let target = {
            let mut reg = self.registry.write().unwrap();
            *reg = false;
            *self.next.lock().unwrap()
        };
        while self.completed.load(Ordering::Acquire) < target {
            thread::yield_now();
        }
        self.buffer.with_mut(|p| unsafe { *p = u64::MAX });
        self.freed.store(true, Ordering::Release);
    }

    /// The workers: run every published task in order; complete it.
    fn work(&self, tasks: u64) {
        for seq in 0..tasks {
            while self.tail.load(Ordering::Acquire) <= seq {
                thread::yield_now();
            }
            let who = self.slots[seq as usize].with(|p| unsafe { *p });
            assert!(who >= 1 && who <= PRODUCERS as u64, "slot {seq} read before it was written");
            // The task reads the buffer: never after it was freed.
            let v = self.buffer.with(|p| unsafe { *p });
            assert_ne!(v, u64::MAX, "a task read a freed buffer");
            self.ran[(who - 1) as usize].fetch_add(1, Ordering::Relaxed);
            self.completed.store(seq + 1, Ordering::Release);
        }
    }
}

#[test]
fn producers_commit_in_order_and_a_dropped_buffer_waits() {
    loom::model(|| {
        let rt = Arc::new(Runtime {
            registry: RwLock::new(true),
            next: Mutex::new(0),
            committed: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            slots: std::array::from_fn(|_| UnsafeCell::new(0)),
            buffer: UnsafeCell::new(7),
            completed: AtomicU64::new(0),
            ran: std::array::from_fn(|_| AtomicU64::new(0)),
            freed: AtomicBool::new(false),
        });
        let producers: Vec<_> = (0..PRODUCERS as u64)
            .map(|who| {
                let rt = rt.clone();
                thread::spawn(move || rt.submit(who))
            })
            .collect();
        let dropper = {
            let rt = rt.clone();
            thread::spawn(move || rt.drop_buffer())
        };
        let accepted: Vec<Option<u64>> = producers.into_iter().map(|h| h.join().unwrap()).collect();
        let n = accepted.iter().flatten().count() as u64;
        // The workers run what was accepted (each accepted task has its own slot).
        rt.work(n);
        dropper.join().unwrap();
        assert!(rt.freed.load(Ordering::Acquire));
        for (who, a) in accepted.iter().enumerate() {
            assert_eq!(rt.ran[who].load(Ordering::Relaxed), a.is_some() as u64, "producer {who}: run exactly once if accepted");
        }
    });
}
