//! The spawn ring's pops by count (`device/src/spawn.rs`, steps 1-3 and 5, since
//! session 22): a pusher claims a position by compare-and-swap on `enqueue`, writes
//! the slot, releases its sequence word, then adds 1 to `ready`; a popper takes one of
//! `ready` (a load that sees it positive, an add of -1 that finds it positive, else the
//! 1 given back), claims the next position with an add on `dequeue`, acquires the
//! slot's word until it reads `pos + 1`, reads the slot, and hands it back. A pop that
//! finds nothing to take reports empty only when `enqueue == dequeue`.
//!
//! A warp that pushes, pops, pushes again and then pops the ring empty before it leaves
//! (step 5), beside another warp that pops once, on a ring of two slots: every value is
//! popped once, no slot is read while written, and the leaving warp leaves nothing
//! behind even when the other's take fails at the wrong moment. Checked by hand
//! (2026-11-26): with the take's give-back removed `ready` ends below zero (and pops
//! would spin); with the emptiness rule dropped (empty as soon as nothing is
//! to take) a value is left behind.

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU32, Ordering};
use loom::thread;

const CAP: u32 = 2;

struct Ring {
    enqueue: AtomicU32,
    dequeue: AtomicU32,
    ready: AtomicU32,
    seq: [AtomicU32; CAP as usize],
    slots: [UnsafeCell<u32>; CAP as usize],
}

impl Ring {
    fn seq(&self, pos: u32) -> u32 {
        self.seq[(pos % CAP) as usize].load(Ordering::Acquire).wrapping_add(pos % CAP)
    }

    /// `try_push`: false when the ring is full.
    fn push(&self, value: u32) -> bool {
        let mut pos = self.enqueue.load(Ordering::Relaxed);
        loop {
            let dif = self.seq(pos).wrapping_sub(pos) as i32;
            if dif == 0 {
                match self.enqueue.compare_exchange(pos, pos + 1, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => break,
                    Err(now) => pos = now,
                }
            } else if dif < 0 {
                return false;
            } else {
                pos = self.enqueue.load(Ordering::Relaxed);
            }
            thread::yield_now();
        }
        self.slots[(pos % CAP) as usize].with_mut(|p| unsafe { *p = value });
        self.seq[(pos % CAP) as usize].store(pos.wrapping_add(1).wrapping_sub(pos % CAP), Ordering::Release);
        self.ready.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// `try_pop`, the slot read and handed back (`release`): the value, or `None` when
    /// empty by the rule above.
    fn pop(&self) -> Option<u32> {
        let pos = loop {
            if self.ready.load(Ordering::Relaxed) as i32 > 0 {
                if self.ready.fetch_add(u32::MAX, Ordering::Relaxed) as i32 > 0 {
                    break self.dequeue.fetch_add(1, Ordering::Relaxed);
                }
                self.ready.fetch_add(1, Ordering::Relaxed);
            }
            if self.enqueue.load(Ordering::Relaxed) == self.dequeue.load(Ordering::Relaxed) {
                return None;
            }
            thread::yield_now();
        };
        while self.seq(pos) != pos + 1 {
            thread::yield_now();
        }
        let v = self.slots[(pos % CAP) as usize].with(|p| unsafe { *p });
        self.seq[(pos % CAP) as usize].store(pos.wrapping_add(CAP).wrapping_sub(pos % CAP), Ordering::Release);
        Some(v)
    }
}

#[test]
fn spawn_pops_by_count() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.max_branches = 50_000;
    b.check(|| {
        let r = Arc::new(Ring {
            enqueue: AtomicU32::new(0),
            dequeue: AtomicU32::new(0),
            ready: AtomicU32::new(0),
            seq: [AtomicU32::new(0), AtomicU32::new(0)],
            slots: [UnsafeCell::new(0), UnsafeCell::new(0)],
        });
        // A warp that pushes, runs a child, pushes again, then leaves once it has
        // popped the ring empty (step 5).
        let pusher = {
            let r = r.clone();
            thread::spawn(move || {
                let mut got = 0;
                assert!(r.push(1));
                got += r.pop().unwrap_or(0);
                assert!(r.push(2));
                while let Some(v) = r.pop() {
                    got += v;
                }
                got
            })
        };
        // Another warp pops once, as an idle worker looks (its take may fail).
        let other = {
            let r = r.clone();
            thread::spawn(move || r.pop().unwrap_or(0))
        };
        let got = pusher.join().unwrap() + other.join().unwrap();
        assert_eq!(got, 3, "every value once, none left behind");
        assert_eq!(r.ready.load(Ordering::Relaxed), 0);
    });
}
