//! The peer path's inbox, as a model:
//!
//! - `inbox_batched_hand_back`: a peer link's inbox (`device/src/link.rs` L2-L4',
//!   `device/src/inbox.rs` I2-I3). Pushers own positions by an atomic add, wait for
//!   their slot's word (acquire), write it and publish (release). The relay pops in
//!   steps: each ready slot's word acquired, the slots read, then one release fence and
//!   relaxed stores of every word it hands back (the batched hand-back). Three pushes
//!   into two slots force reuse: loom flags a slot write racing the relay's read (for
//!   instance with the fence removed), and every value is popped once.
//!
//! The spawn ring that the inbox pushes into has its own model (`loom/spawn.rs`).
//!
//! Lanes of a warp are modelled by one thread doing their steps in each lane's program
//! order (they touch disjoint slots). Both sides spin, so the models run with a
//! preemption bound of 1, as the outbox model does. Checked by hand (2026-11-26): with
//! the relay's fence removed loom reports a read racing a write of a slot, and with the
//! range claim's compare-and-swap made a plain store, two writes of one slot.

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU32, Ordering, fence};
use loom::thread;

const CAP: u32 = 2;

struct Inbox {
    enqueue: AtomicU32,
    seq: [AtomicU32; CAP as usize],
    slots: [UnsafeCell<u32>; CAP as usize],
}

impl Inbox {
    fn push(&self, value: u32) {
        let pos = self.enqueue.fetch_add(1, Ordering::Relaxed);
        let i = pos & (CAP - 1);
        while self.seq[i as usize].load(Ordering::Acquire).wrapping_add(i) != pos {
            thread::yield_now();
        }
        self.slots[i as usize].with_mut(|p| unsafe { *p = value });
        self.seq[i as usize].store(pos.wrapping_add(1).wrapping_sub(i), Ordering::Release);
    }

    /// One step of the relay from `pos`: the ready prefix (each word acquired), the
    /// slots read, one release fence, the words handed back relaxed. The values.
    fn step(&self, pos: u32) -> Vec<u32> {
        let mut got = Vec::new();
        for k in 0..CAP {
            let p = pos.wrapping_add(k);
            let i = p & (CAP - 1);
            if self.seq[i as usize].load(Ordering::Acquire).wrapping_add(i) != p.wrapping_add(1) {
                break;
            }
            got.push(self.slots[i as usize].with(|s| unsafe { *s }));
        }
        if !got.is_empty() {
            fence(Ordering::Release);
            for k in 0..got.len() as u32 {
                let p = pos.wrapping_add(k);
                let i = p & (CAP - 1);
                self.seq[i as usize].store(p.wrapping_add(CAP).wrapping_sub(i), Ordering::Relaxed);
            }
        }
        got
    }
}

#[test]
fn inbox_batched_hand_back() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(1);
    b.max_branches = 20_000;
    b.check(|| {
        let q = Arc::new(Inbox {
            enqueue: AtomicU32::new(0),
            seq: [AtomicU32::new(0), AtomicU32::new(0)],
            slots: [UnsafeCell::new(0), UnsafeCell::new(0)],
        });
        let pushers: Vec<_> = [vec![1u32, 2], vec![4]]
            .into_iter()
            .map(|values| {
                let q = q.clone();
                thread::spawn(move || values.into_iter().for_each(|v| q.push(v)))
            })
            .collect();
        let (mut got, mut pos) = (0u32, 0u32);
        while pos < 3 {
            let vs = q.step(pos);
            if vs.is_empty() {
                thread::yield_now();
            }
            pos += vs.len() as u32;
            got += vs.iter().sum::<u32>();
        }
        pushers.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(got, 7);
    });
}
