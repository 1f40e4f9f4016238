//! The passed prefix of a batch checked as it is published (`Batch::pipelined`):
//! its parts are checked on several threads in any order, and a piece may be published
//! once every part from the batch's first up to its own has passed. Lock-free: each
//! thread marks its part, then moves the prefix on over every marked part it finds at
//! its end.
//!
//! Why the last thread to mark moves the prefix past every marked part: a thread that
//! marks part `k` while the prefix waits at an unmarked `j < k`, and the thread that
//! marks `j`, each mark, then fence, then read the other's mark (through the prefix
//! loop). With a sequentially consistent fence between each one's store and its loads,
//! at least one of them sees the other's mark (the store-buffer pattern, which acquire
//! and release alone would let both miss). The model: `loom_prefix_*` below, which
//! fails (a marked part missed) when the fence is taken out.

use crate::util::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};

pub(crate) struct Prefix {
    passed: Vec<AtomicBool>,
    /// Parts from the first on that are known to have passed.
    at: AtomicUsize,
}

impl Prefix {
    pub fn new(parts: usize) -> Self {
        Self { passed: (0..parts).map(|_| AtomicBool::new(false)).collect(), at: AtomicUsize::new(0) }
    }

    /// Marks part `k` passed, and returns how far the prefix reaches as this thread
    /// moved it: every part before the answer has passed.
    pub fn mark(&self, k: usize) -> usize {
        // Release: a thread that reads the mark (and moves the prefix over it) sees
        // what came before it on this thread (nothing else is published through it:
        // the staging reads only the caller's tasks, which no one writes).
        self.passed[k].store(true, Ordering::Release);
        fence(Ordering::SeqCst);
        let mut p = self.at.load(Ordering::Acquire);
        while p < self.passed.len() && self.passed[p].load(Ordering::Acquire) {
            match self.at.compare_exchange_weak(p, p + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => p += 1,
                Err(now) => p = now,
            }
        }
        p
    }

    /// How far the prefix reaches now.
    pub fn get(&self) -> usize {
        self.at.load(Ordering::Acquire)
    }
}

/// loom: threads mark parts in every order; the prefix never covers a part not yet
/// marked, and once all have marked it covers every part (no mark is missed, whoever
/// marks last).
#[cfg(all(test, loom))]
mod loom_prefix {
    use super::*;
    use loom::sync::Arc;

    fn run(orders: &'static [&'static [usize]], parts: usize) {
        // Three threads explored whole take tens of minutes: bounded preemptions (as
        // loom's own docs advise), still every order of the marks.
        let mut b = loom::model::Builder::new();
        if orders.len() > 2 {
            b.preemption_bound = Some(2);
        }
        b.check(move || {
            let p = Arc::new(Prefix::new(parts));
            let hs: Vec<_> = orders
                .iter()
                .map(|order| {
                    let p = p.clone();
                    loom::thread::spawn(move || {
                        for &k in order.iter() {
                            let upto = p.mark(k);
                            for j in 0..upto {
                                assert!(p.passed[j].load(Ordering::Acquire), "the prefix passed part {j}, not marked");
                            }
                        }
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(p.get(), parts, "a marked part was missed");
        });
    }

    #[test]
    fn loom_prefix_two_threads_out_of_order() {
        run(&[&[1], &[0]], 2);
        run(&[&[2, 0], &[1]], 3);
    }

    #[test]
    fn loom_prefix_three_threads() {
        run(&[&[2], &[0], &[1]], 3);
    }
}
