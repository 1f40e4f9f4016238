//! Publication in sequence order, with no producer waiting for another.
//!
//! Producers reserve consecutive ranges of sequence numbers, stage their tasks side by
//! side, and must publish in sequence order (the workers' `tail`, the relay's run
//! entries and the copies all advance in order). A producer whose piece is ready while
//! an earlier one is not does not wait for it: it leaves its piece here and returns.
//! The thread that publishes the piece just before it publishes it too, and every
//! waiting piece that follows, in one turn. So a producer waits for nothing but room
//! in the ring, and `Batch::try_submit` waits for nothing at all.
//!
//! Ordering: a piece's tasks are written (staged) by its producer before it calls
//! [`Publisher::commit`]; the lock's release by that call, and its acquire by whichever
//! thread publishes the piece, put those writes before the publication (the release
//! store of `tail`, of a run's span, or the copies that follow on the transfer stream),
//! which the workers acquire. The lock also orders the publications themselves: one at
//! a time, in sequence order.
//!
//! `published` (the end of everything published) is also kept in an atomic, stored
//! (Release) by the publishing thread under the lock after each publication and read
//! (Acquire) with no lock: a reader sees the writes of every piece before the end it
//! reads, as a reader under the lock would, and does not contend with producers for it.
//!
//! What it does not own: room in the ring (the producer waits for it before staging,
//! `Batch::room`), and what a publication is on a backend (the caller's `publish`).

use std::collections::BTreeMap;

use crate::util::sync::Mutex;
use crate::util::sync::atomic::{AtomicU64, Ordering};
use crate::{Error, Result};

/// How a piece reaches the workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum How {
    /// Its slots are staged: `tail = end` (and, on CUDA without runs, the copies).
    Tail,
    /// A list run: table entry `entry` says that its tasks lie at `from`.
    Run { from: u64, entry: usize },
}

/// One piece of a batch, staged and ready: slots `at..end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Publication {
    pub at: u64,
    pub end: u64,
    pub how: How,
}

#[derive(Default)]
struct State {
    /// Pieces ready before their turn, by their first sequence number.
    waiting: BTreeMap<u64, Publication>,
    /// A publication failed: nothing is published after it (the runtime has recorded
    /// its fault, which resolves every ticket).
    failed: bool,
}

#[derive(Default)]
pub(crate) struct Publisher {
    state: Mutex<State>,
    /// End of everything published: written only under `state`'s lock.
    published: AtomicU64,
}

impl Publisher {
    /// End of everything published so far: every task before it was written (and
    /// checked) before this call.
    pub fn published(&self) -> u64 {
        // Acquire: pairs with the Release store in `commit`, after the publication.
        self.published.load(Ordering::Acquire)
    }

    /// Publishes `piece` in its turn with `publish`: at once if every piece before it
    /// is out (and then every waiting piece that follows it), else when the thread that
    /// publishes the piece before it gets to it. `Err` only if a publication by this
    /// call failed (`publish`'s error); a piece left waiting is `Ok`.
    pub fn commit(&self, piece: Publication, mut publish: impl FnMut(&Publication) -> Result<()>) -> Result<()> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.failed {
            return Err(Error::ShutDown);
        }
        // Relaxed: only this lock's holder stores it, and the lock orders the holders.
        let published = self.published.load(Ordering::Relaxed);
        if published != piece.at {
            debug_assert!(piece.at > published, "a piece published twice");
            s.waiting.insert(piece.at, piece);
            return Ok(());
        }
        let mut next = Some(piece);
        while let Some(p) = next {
            if let Err(e) = publish(&p) {
                s.failed = true;
                return Err(e);
            }
            // Release: the piece's staged tasks (ordered before this by the lock, as
            // above) before the end a lock-free `published` reads.
            self.published.store(p.end, Ordering::Release);
            next = s.waiting.remove(&p.end);
        }
        Ok(())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn piece(at: u64, end: u64) -> Publication {
        Publication { at, end, how: How::Tail }
    }

    /// Pieces committed out of order are published in order, each once, by whichever
    /// thread's commit completes the prefix.
    #[test]
    fn out_of_order_commits_publish_in_order() {
        let p = Publisher::default();
        let mut out = vec![];
        let mut log = |x: &Publication| {
            out.push(x.at);
            Ok(())
        };
        p.commit(piece(10, 20), &mut log).unwrap();
        p.commit(piece(20, 25), &mut log).unwrap();
        p.commit(piece(0, 10), &mut log).unwrap();
        assert_eq!(out, vec![0, 10, 20]);
        assert_eq!(p.published(), 25);
    }

    /// Many threads, pieces in random order: every piece published once, in order.
    #[test]
    fn threads_side_by_side() {
        let p = Arc::new(Publisher::default());
        let log = Arc::new(std::sync::Mutex::new(vec![]));
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (p, log) = (p.clone(), log.clone());
                s.spawn(move || {
                    for k in (0..250u64).rev() {
                        let at = (k * 4 + t) * 3;
                        p.commit(piece(at, at + 3), |x| {
                            log.lock().unwrap().push(x.at);
                            Ok(())
                        })
                        .unwrap();
                    }
                });
            }
        });
        let log = log.lock().unwrap();
        assert_eq!(*log, (0..1000u64).map(|i| i * 3).collect::<Vec<_>>());
    }

    /// A failed publication stops every later one.
    #[test]
    fn a_failure_stops_publication() {
        let p = Publisher::default();
        p.commit(piece(5, 6), |_| Ok(())).unwrap();
        assert_eq!(p.commit(piece(0, 5), |_| Err(Error::Timeout)), Err(Error::Timeout));
        assert_eq!(p.commit(piece(6, 7), |_| Ok(())), Err(Error::ShutDown));
    }
}

/// loom: producers commit their pieces side by side, in any order; every piece is
/// published once, in sequence order, and its staged tasks (a cell written before the
/// commit) are visible to whichever thread publishes it, and to a reader of
/// `published` that takes no lock: loom flags the access if no happens-before edge
/// orders them.
#[cfg(all(test, loom))]
mod loom_publisher {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    struct Ring {
        publisher: Publisher,
        /// One slot per piece, written by its producer ("staging").
        slots: [UnsafeCell<u64>; 3],
        /// What the publications saw, in order.
        log: loom::sync::Mutex<Vec<(u64, u64)>>,
    }

    #[test]
    fn loom_publication_in_order_with_staged_tasks_visible() {
        loom::model(|| {
            let ring = Arc::new(Ring {
                publisher: Publisher::default(),
                slots: [UnsafeCell::new(0), UnsafeCell::new(0), UnsafeCell::new(0)],
                log: loom::sync::Mutex::new(vec![]),
            });
            let commit = |ring: &Ring, k: u64| {
                // Stage: the piece's tasks.
                ring.slots[k as usize].with_mut(|p| unsafe { *p = 100 + k });
                let piece = Publication { at: k, end: k + 1, how: How::Tail };
                ring.publisher
                    .commit(piece, |p| {
                        let seen = ring.slots[p.at as usize].with(|v| unsafe { *v });
                        ring.log.lock().unwrap().push((p.at, seen));
                        Ok(())
                    })
                    .unwrap();
            };
            let hs: Vec<_> = [2u64, 1]
                .into_iter()
                .map(|k| {
                    let ring = ring.clone();
                    loom::thread::spawn(move || commit(&ring, k))
                })
                .collect();
            // A reader with no lock (`Buffer::new`, `Runtime::published`): every slot
            // below the end it reads was staged before it (Acquire, paired with the
            // publisher's Release; fails with Relaxed: checked 2026-11-27).
            let reader = {
                let ring = ring.clone();
                loom::thread::spawn(move || {
                    let end = ring.publisher.published();
                    for k in 0..end {
                        assert_eq!(ring.slots[k as usize].with(|v| unsafe { *v }), 100 + k);
                    }
                })
            };
            commit(&ring, 0);
            for h in hs {
                h.join().unwrap();
            }
            reader.join().unwrap();
            assert_eq!(*ring.log.lock().unwrap(), vec![(0, 100), (1, 101), (2, 102)]);
        });
    }
}
