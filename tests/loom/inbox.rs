//! The peer path's two queues (issue 23), as models:
//!
//! - `inbox_batched_hand_back`: a peer link's inbox (`device/src/link.rs` L2-L4',
//!   `device/src/inbox.rs` I2-I3). Pushers own positions by an atomic add, wait for
//!   their slot's word (acquire), write it and publish (release). The relay pops in
//!   steps: each ready slot's word acquired, the slots read, then one release fence and
//!   relaxed stores of every word it hands back (the batched hand-back). Three pushes
//!   into two slots force reuse: loom flags a slot write racing the relay's read (for
//!   instance with the fence removed), and every value is popped once.
//! - `spawn_range_claims`: the spawn ring's warp-wide push (`SpawnRing::try_push_warp`)
//!   beside a single push: a range is claimed by one compare-and-swap on `enqueue`
//!   after every slot of it was seen free (acquire), each slot then written and
//!   released on its own; the popper pops slot by slot. Every value once, no race.
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

/// Vyukov's ring as the spawn ring is, with 4 slots.
struct Ring {
    enqueue: AtomicU32,
    seq: [AtomicU32; 4],
    slots: [UnsafeCell<u32>; 4],
}

impl Ring {
    fn seq(&self, pos: u32) -> u32 {
        self.seq[(pos & 3) as usize].load(Ordering::Acquire).wrapping_add(pos & 3)
    }

    fn publish(&self, pos: u32, value: u32) {
        self.slots[(pos & 3) as usize].with_mut(|p| unsafe { *p = value });
        self.seq[(pos & 3) as usize].store(pos.wrapping_add(1).wrapping_sub(pos & 3), Ordering::Release);
    }

    /// `try_push_warp`: the free prefix of `values.len()` slots from `enqueue`, claimed
    /// by one CAS; how many were pushed (0: the first slot is taken).
    fn push_range(&self, values: &[u32]) -> usize {
        loop {
            let pos = self.enqueue.load(Ordering::Relaxed);
            let mut k = 0;
            while k < values.len() && self.seq(pos + k as u32) == pos + k as u32 {
                k += 1;
            }
            if k == 0 {
                if (self.seq(pos).wrapping_sub(pos) as i32) < 0 {
                    return 0;
                }
                thread::yield_now();
                continue;
            }
            if self.enqueue.compare_exchange(pos, pos + k as u32, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
                for (j, v) in values[..k].iter().enumerate() {
                    self.publish(pos + j as u32, *v);
                }
                return k;
            }
        }
    }

    /// `try_push`: one slot.
    fn push_one(&self, value: u32) -> bool {
        self.push_range(&[value]) == 1
    }

    /// The one popper: slot `pos` once published, handed back after the read.
    fn pop(&self, pos: u32) -> Option<u32> {
        if self.seq(pos) != pos + 1 {
            return None;
        }
        let v = self.slots[(pos & 3) as usize].with(|p| unsafe { *p });
        self.seq[(pos & 3) as usize].store(pos.wrapping_add(4).wrapping_sub(pos & 3), Ordering::Release);
        Some(v)
    }
}

#[test]
fn spawn_range_claims() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(1);
    b.max_branches = 20_000;
    b.check(|| {
        let r = Arc::new(Ring {
            enqueue: AtomicU32::new(0),
            seq: [AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)],
            slots: [UnsafeCell::new(0), UnsafeCell::new(0), UnsafeCell::new(0), UnsafeCell::new(0)],
        });
        let range = {
            let r = r.clone();
            thread::spawn(move || {
                let values = [1u32, 2, 4];
                let mut done = 0;
                while done < values.len() {
                    done += r.push_range(&values[done..]);
                    thread::yield_now();
                }
            })
        };
        let single = {
            let r = r.clone();
            thread::spawn(move || {
                while !r.push_one(8) {
                    thread::yield_now();
                }
            })
        };
        let (mut got, mut pos) = (0u32, 0u32);
        while pos < 4 {
            match r.pop(pos) {
                Some(v) => {
                    got += v;
                    pos += 1;
                }
                None => thread::yield_now(),
            }
        }
        range.join().unwrap();
        single.join().unwrap();
        assert_eq!(got, 15);
    });
}
