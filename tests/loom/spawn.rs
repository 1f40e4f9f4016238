//! The spawn ring (`device/src/spawn.rs`, steps 1-6 and 8): a pusher reserves room in
//! `used` (giving it back if that passes the capacity), claims a range of positions with
//! one add on `enqueue`, waits for each slot's word to say the slot is free for its
//! position (acquire), writes the slot, releases the word, then adds the range's length
//! to `ready`. A popper takes up to a batch of `ready` (an add of `-want`, keeping what
//! the add found and giving the rest back), claims that many positions with one add on
//! `dequeue`, waits for each word to say published (acquire), copies the slots out,
//! hands each back (release) and subtracts the count from `used`. A pop that takes
//! nothing reports empty only when `enqueue == dequeue`.
//!
//! Lanes of a warp are modelled by one thread doing their steps in program order (they
//! touch disjoint slots). On a ring of two slots:
//! - `spawn_ranges_and_batches`: a warp pushes a range of two (the whole ring), pops a
//!   batch, pushes again (reusing a slot that the other warp may be copying), and leaves
//!   once it has popped the ring empty (step 8); another warp pops once. Every value
//!   is popped once, no slot is written while read, nothing is left behind, and the
//!   counts end at zero.
//! - `spawn_full_refuses`: a range longer than the room left is refused whole, and the
//!   reservation taken back.
//!
//! Checked by hand (2026-11-29): with the hand-back's release made relaxed, or the
//! pusher's wait for a free word dropped, loom reports a slot written while it is read;
//! with the give-back of an over-take removed, `ready` does not end at zero.

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU32, Ordering};
use loom::thread;

const CAP: u32 = 2;
/// The model's `POP_BATCH`.
const BATCH: u32 = 2;

struct Ring {
    enqueue: AtomicU32,
    dequeue: AtomicU32,
    ready: AtomicU32,
    used: AtomicU32,
    seq: [AtomicU32; CAP as usize],
    slots: [UnsafeCell<u32>; CAP as usize],
}

impl Ring {
    fn new() -> Self {
        Self {
            enqueue: AtomicU32::new(0),
            dequeue: AtomicU32::new(0),
            ready: AtomicU32::new(0),
            used: AtomicU32::new(0),
            seq: [AtomicU32::new(0), AtomicU32::new(0)],
            slots: [UnsafeCell::new(0), UnsafeCell::new(0)],
        }
    }

    fn seq(&self, pos: u32) -> u32 {
        self.seq[(pos % CAP) as usize].load(Ordering::Acquire).wrapping_add(pos % CAP)
    }

    fn set_seq(&self, pos: u32, value: u32) {
        self.seq[(pos % CAP) as usize].store(value.wrapping_sub(pos % CAP), Ordering::Release);
    }

    /// `try_push_warp`: all of `values` or none (false: no room).
    fn push(&self, values: &[u32]) -> bool {
        let n = values.len() as u32;
        // Step 1.
        let before = self.used.fetch_add(n, Ordering::Relaxed);
        if before + n > CAP {
            self.used.fetch_sub(n, Ordering::Relaxed);
            return false;
        }
        // Step 2.
        let pos = self.enqueue.fetch_add(n, Ordering::Relaxed);
        for (i, v) in values.iter().enumerate() {
            let mine = pos + i as u32;
            while self.seq(mine) != mine {
                thread::yield_now();
            }
            // Step 3.
            self.slots[(mine % CAP) as usize].with_mut(|p| unsafe { *p = *v });
            self.set_seq(mine, mine + 1);
        }
        self.ready.fetch_add(n, Ordering::Relaxed);
        true
    }

    /// `try_pop`: the sum of the batch popped, or `None` when empty by the rule above.
    fn pop(&self) -> Option<u32> {
        let (pos, took) = loop {
            // Step 4.
            let r = self.ready.load(Ordering::Relaxed) as i32;
            if r > 0 {
                let want = (r as u32).min(BATCH);
                let before = self.ready.fetch_sub(want, Ordering::Relaxed) as i32;
                let took = before.clamp(0, want as i32) as u32;
                if took < want {
                    self.ready.fetch_add(want - took, Ordering::Relaxed);
                }
                if took > 0 {
                    break (self.dequeue.fetch_add(took, Ordering::Relaxed), took);
                }
            }
            if self.enqueue.load(Ordering::Relaxed) == self.dequeue.load(Ordering::Relaxed) {
                return None;
            }
            thread::yield_now();
        };
        // Step 5: copy out, then hand back.
        let mut sum = 0;
        for i in 0..took {
            let mine = pos + i;
            while self.seq(mine) != mine + 1 {
                thread::yield_now();
            }
            sum += self.slots[(mine % CAP) as usize].with(|p| unsafe { *p });
        }
        for i in 0..took {
            self.set_seq(pos + i, pos + i + CAP);
        }
        self.used.fetch_sub(took, Ordering::Relaxed);
        Some(sum)
    }
}

#[test]
fn spawn_ranges_and_batches() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.max_branches = 50_000;
    b.check(|| {
        let r = Arc::new(Ring::new());
        // A warp that pushes a range, runs a batch, pushes again, then leaves once it
        // has popped the ring empty (step 8).
        let pusher = {
            let r = r.clone();
            thread::spawn(move || {
                let mut got = 0;
                assert!(r.push(&[1, 2]));
                got += r.pop().unwrap_or(0);
                while !r.push(&[4]) {
                    // No room until the other warp's batch is handed back.
                    got += r.pop().unwrap_or(0);
                    thread::yield_now();
                }
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
        assert_eq!(got, 7, "every value once, none left behind");
        assert_eq!(r.ready.load(Ordering::Relaxed), 0);
        assert_eq!(r.used.load(Ordering::Relaxed), 0);
    });
}

#[test]
fn spawn_full_refuses() {
    loom::model(|| {
        let r = Ring::new();
        assert!(r.push(&[1]));
        assert!(!r.push(&[2, 4]), "two more do not fit a ring of two holding one");
        assert_eq!(r.used.load(Ordering::Relaxed), 1, "the refused reservation is taken back");
        assert!(r.push(&[2]));
        assert_eq!(r.pop(), Some(3));
        assert_eq!(r.pop(), None);
    });
}
