//! Tickets registered and not yet taken by a completion scan: a stack of tickets linked
//! through their own `next` field, pushed with one compare-and-swap and taken whole
//! with one swap (no lock, no allocation).
//!
//! Producers push right after their reservations, outside the producer lock, so pushes
//! may come out of sequence order (by as many as producers run at once); a scan takes
//! everything pushed so far and sorts it by sequence number, and the tracker merges it
//! into its tickets, keeping a gap where a reserved ticket is not pushed yet
//! (host/queue/completions.rs: no scan passes a gap). A scan that finds the stack empty
//! reads one word, which only a registration writes: waiters poll it freely without
//! taking a line that producers write (under four producers the mutex this replaces was
//! an RMW per registration and per poll on one shared line).
//!
//! Closing (`close`, by `CompletionTracker::fail_all`) races registrations: a ticket
//! pushed just as the tracker closes must be failed by someone. Both sides put a SeqCst
//! fence between their two accesses (push, then read `closed`; set `closed`, then take):
//! by the fences' total order, either the push's reader sees `closed` and fails the
//! ticket itself, or the close's take finds the ticket. (Modelled by loom below and in
//! `completions::loom_tracker`; `TicketState::fail` is idempotent, so both may.)
//!
//! A hand-written stack rather than `crossbeam`'s `SegQueue`: this one is loom-modelled
//! through host/util/sync.rs, and it is intrusive (a ticket is pushed once in its life).

use std::ptr;
use std::sync::Arc;

use super::ticket_state::TicketState;
use crate::Error;
use crate::util::sync::Mutex;
use crate::util::sync::atomic::{AtomicBool, AtomicPtr, Ordering, fence};

pub(crate) struct Registrations {
    /// The newest ticket pushed and not taken (its `next`: the one pushed before it),
    /// or null. Each holds one strong count of its ticket (`Arc::into_raw`).
    head: AtomicPtr<TicketState>,
    /// Set by [`close`](Self::close): a ticket pushed from then on fails at once.
    closed: AtomicBool,
    /// The error `close` fails tickets with (the first one sticks).
    error: Mutex<Option<Error>>,
}

impl Default for Registrations {
    fn default() -> Self {
        Self { head: AtomicPtr::new(ptr::null_mut()), closed: AtomicBool::new(false), error: Mutex::new(None) }
    }
}

impl Registrations {
    /// Registers `t` (in any order among threads). Once closed,
    /// also fails it with the close's error: it stays on the stack, and the scan that
    /// takes it after the close drops it (`CompletionTracker::take_incoming`).
    pub fn push(&self, t: &Arc<TicketState>) {
        let p = Arc::into_raw(t.clone()) as *mut TicketState;
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: `p` is this push's own strong count: the ticket lives, and nobody
            // else reads its `next` before the exchange below publishes it.
            unsafe { (*p).next.store(head, Ordering::Relaxed) };
            // Release (within SeqCst): a taker's acquiring swap sees `next` and the
            // ticket's fields, written before.
            match self.head.compare_exchange_weak(head, p, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => break,
                Err(h) => head = h,
            }
        }
        // Pairs with the fence in `close`: see the module's doc.
        fence(Ordering::SeqCst);
        if self.closed.load(Ordering::Relaxed) {
            let e = self.error.lock().unwrap_or_else(|e| e.into_inner()).clone();
            // Set before `closed` (under the same lock in `close`): never `None` here.
            t.fail(e.unwrap_or(Error::ShutDown));
        }
    }

    /// Whether nothing waits to be taken (one load: what a poll with nothing new pays).
    pub fn is_empty(&self) -> bool {
        self.head.load(Ordering::Relaxed).is_null()
    }

    /// Appends every ticket pushed so far to `out`, in sequence order (of `first`).
    pub fn take_into(&self, out: &mut Vec<Arc<TicketState>>) {
        if self.is_empty() {
            return;
        }
        // Acquire: pairs with the pushes' exchanges (release sequence through each
        // later exchange of `head`): every taken ticket's `next` and fields are seen.
        let mut p = self.head.swap(ptr::null_mut(), Ordering::Acquire);
        let start = out.len();
        while !p.is_null() {
            // SAFETY: `p` came from a push's `Arc::into_raw` and was unlinked by the
            // swap above: this call owns its strong count now, and reads its `next`
            // (written before its push) before giving the count to the `Arc`.
            let next = unsafe { (*p).next.load(Ordering::Relaxed) };
            out.push(unsafe { Arc::from_raw(p) });
            p = next;
        }
        // Newest first as taken: push order is the reverse, and pushes come in sequence
        // order but for the few reservations made side by side (a sort of an almost
        // sorted run: one pass when it is sorted).
        out[start..].reverse();
        out[start..].sort_by_key(|t| (t.first, t.end));
    }

    /// Closes with `error` (the first close's error sticks) and appends every ticket
    /// pushed before to `out`; every later push fails its ticket itself.
    pub fn close(&self, error: &Error, out: &mut Vec<Arc<TicketState>>) {
        {
            let mut e = self.error.lock().unwrap_or_else(|e| e.into_inner());
            e.get_or_insert_with(|| error.clone());
            self.closed.store(true, Ordering::Relaxed);
        }
        // Pairs with the fence in `push`: see the module's doc.
        fence(Ordering::SeqCst);
        self.take_into(out);
    }
}

impl Drop for Registrations {
    fn drop(&mut self) {
        // Tickets never taken (the runtime ended first): their counts are released.
        let mut left: Vec<Arc<TicketState>> = Vec::new();
        self.take_into(&mut left);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn ticket(first: u64) -> Arc<TicketState> {
        Arc::new(TicketState::new(first, first + 1, false, false))
    }

    /// Takes come in push order, across several takes; tickets never taken are freed
    /// with the stack (Miri checks the counts: a leak or a double free fails it).
    #[test]
    fn registrations_taken_in_push_order() {
        let r = Registrations::default();
        let mut out: Vec<Arc<TicketState>> = vec![];
        assert!(r.is_empty());
        r.take_into(&mut out);
        for i in 0..3 {
            r.push(&ticket(i));
        }
        r.take_into(&mut out);
        r.push(&ticket(3));
        r.take_into(&mut out);
        assert_eq!(out.iter().map(|t| t.first).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert!(out.iter().all(|t| Arc::strong_count(t) == 1));
        let kept = ticket(4);
        r.push(&kept);
        drop(r);
        assert_eq!(Arc::strong_count(&kept), 1);
    }

    /// A push after the close fails its ticket with the close's error; one before is
    /// handed to the close.
    #[test]
    fn registrations_closed_fail_later_pushes() {
        let r = Registrations::default();
        let (early, late) = (ticket(0), ticket(1));
        r.push(&early);
        let mut out: Vec<Arc<TicketState>> = vec![];
        r.close(&Error::Timeout, &mut out);
        r.close(&Error::ShutDown, &mut out);
        assert_eq!(out.len(), 1);
        assert!(!early.is_done(), "the close hands the ticket over; the caller fails it");
        r.push(&late);
        assert!(late.is_done());
        assert_eq!(late.outcome.lock().unwrap().error, Some(Error::Timeout));
    }

    /// Pushes out of sequence order are taken sorted, within a take.
    #[test]
    fn registrations_taken_sorted() {
        let r = Registrations::default();
        for i in [1, 0, 3, 2] {
            r.push(&ticket(i));
        }
        let mut out: Vec<Arc<TicketState>> = vec![];
        r.take_into(&mut out);
        assert!(out.iter().map(|t| t.first).eq(0..4));
    }

    /// Threads pushing in the order of a lock of theirs while another takes: every
    /// ticket taken once, in push order.
    #[test]
    fn registrations_pushes_beside_takes() {
        let r = Registrations::default();
        let order = std::sync::Mutex::new(0u64);
        let per = if cfg!(miri) { 20 } else { 2000 };
        let mut out: Vec<Arc<TicketState>> = vec![];
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..per {
                        let mut next = order.lock().unwrap();
                        r.push(&ticket(*next));
                        *next += 1;
                    }
                });
            }
            while out.len() < 3 * per as usize {
                r.take_into(&mut out);
                std::hint::spin_loop();
            }
        });
        assert!(out.iter().map(|t| t.first).eq(0..3 * per));
    }
}

/// loom: two producers push (in either order, as they do after their reservations)
/// while a scan takes; every ticket is taken once, each take in sequence order. (The
/// ticket's fields are plain, which loom does not track: the tracker's model,
/// `loom_a_ticket_registered_beside_fail_all_resolves`, is the one that fails with the
/// push's and take's orderings weakened.)
#[cfg(all(test, loom))]
mod loom_registrations {
    use super::*;

    #[test]
    fn loom_registrations_taken_once_in_order() {
        loom::model(|| {
            let r = Arc::new(Registrations::default());
            let hs: Vec<_> = (0..2u64)
                .map(|first| {
                    let r = r.clone();
                    loom::thread::spawn(move || r.push(&Arc::new(TicketState::new(first, first + 1, false, false))))
                })
                .collect();
            let mut takes: Vec<Vec<Arc<TicketState>>> = vec![vec![], vec![]];
            r.take_into(&mut takes[0]);
            for h in hs {
                h.join().unwrap();
            }
            r.take_into(&mut takes[1]);
            for take in &takes {
                assert!(take.windows(2).all(|w| w[0].first < w[1].first), "a take out of order");
            }
            let mut all: Vec<(u64, u64)> = takes.iter().flatten().map(|t| (t.first, t.end)).collect();
            all.sort();
            assert_eq!(all, vec![(0, 1), (1, 2)]);
        });
    }
}
