//! The link outbox (`device/src/link.rs` L2-L4, `host/multi/link.rs` F1-F2): pushers
//! own positions by an atomic add on `enqueue`, wait for the slot's sequence word to say
//! their position (acquire), write the slot (a plain write), and publish the word
//! `pos + 1` (release); the one popper reads the word (acquire), reads the slot, and
//! hands it back with `pos + cap` (release). Three pushes into two slots force reuse:
//! loom flags a slot write that races the popper's read, and the test checks that every
//! pushed value is popped once. (A single slot is wrong, and loom says so: the
//! publication `pos + 1` would read as "free" to the push at `pos + 1`; the code takes
//! at least 2. Both sides spin, so the model runs with a preemption bound of 1; it still
//! flags either acquire weakened to relaxed, checked by hand on 2026-11-26.)

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU32, Ordering};
use loom::thread;

struct Outbox {
    cap: u32,
    enqueue: AtomicU32,
    /// Stored relative to the slot index, as in the code (zeroed memory is the start).
    seq: [AtomicU32; 2],
    slots: [UnsafeCell<u32>; 2],
}

impl Outbox {
    fn push(&self, value: u32) {
        // L2: the position.
        let pos = self.enqueue.fetch_add(1, Ordering::Relaxed);
        let i = pos & (self.cap - 1);
        // L3: wait until the popper handed the slot back (acquire).
        while self.seq[i as usize].load(Ordering::Acquire).wrapping_add(i) != pos {
            thread::yield_now();
        }
        // L4: the task, then its publication (release).
        self.slots[i as usize].with_mut(|p| unsafe { *p = value });
        self.seq[i as usize].store(pos.wrapping_add(1).wrapping_sub(i), Ordering::Release);
    }

    /// F1, F2.
    fn pop(&self, pos: u32) -> Option<u32> {
        let i = pos & (self.cap - 1);
        if self.seq[i as usize].load(Ordering::Acquire).wrapping_add(i) != pos.wrapping_add(1) {
            return None;
        }
        let v = self.slots[i as usize].with(|p| unsafe { *p });
        self.seq[i as usize].store(pos.wrapping_add(self.cap).wrapping_sub(i), Ordering::Release);
        Some(v)
    }
}

#[test]
fn two_pushers_one_popper_slot_reuse() {
    // As the other models: a preemption bound keeps the spin loops' schedules finite.
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(1);
    b.max_branches = 20_000;
    b.check(|| {
        let o = Arc::new(Outbox {
            cap: 2,
            enqueue: AtomicU32::new(0),
            seq: [AtomicU32::new(0), AtomicU32::new(0)],
            slots: [UnsafeCell::new(0), UnsafeCell::new(0)],
        });
        // Three pushes into two slots: one slot is reused.
        let pushers: Vec<_> = [vec![1u32, 2], vec![4]]
            .into_iter()
            .map(|values| {
                let o = o.clone();
                thread::spawn(move || values.into_iter().for_each(|v| o.push(v)))
            })
            .collect();
        let mut got = 0u32;
        let mut pos = 0u32;
        while pos < 3 {
            match o.pop(pos) {
                Some(v) => {
                    got += v;
                    pos += 1;
                }
                None => thread::yield_now(),
            }
        }
        pushers.into_iter().for_each(|h| h.join().unwrap());
        // Every value once (1 + 2 + 4).
        assert_eq!(got, 7);
    });
}
