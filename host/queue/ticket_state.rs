//! What a ticket knows: its range of sequence numbers and, once done, its outcome.

use crate::util::sync::Mutex;
use crate::util::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use resident_shared::Status;

use crate::Error;

#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Inline results in sequence order, when the submitter asked for them.
    pub results: Vec<u64>,
    /// The first task that failed on the device: its slot's sequence number, its
    /// status, and its place among the tasks the slot stands for (0 unless the slot is
    /// a list chunk, `TicketState::per_slot`).
    pub failure: Option<(u64, Status)>,
    /// The failed task's place in its list chunk (from the chunk's record).
    pub failure_in_slot: u64,
    /// Set when the ticket cannot complete (device fault, abort on shutdown).
    pub error: Option<Error>,
}

#[derive(Debug)]
pub(crate) struct TicketState {
    pub first: u64,
    pub end: u64,
    pub keep_results: bool,
    /// Tasks per slot: 1, or a resident list's chunk size (`TaskList`), whose slot `k`
    /// stands for tasks `k * per_slot ..` of the list.
    pub per_slot: u32,
    /// Tasks the ticket covers (its slots, or a chunked list's tasks).
    pub tasks: u64,
    /// A lone `task_flags::EXPRESS` task: done as soon as its own completion record
    /// is written (`CompletionTracker::advance`), before its segment's.
    pub express: bool,
    done: AtomicBool,
    /// Set by its waiter, before `done`, when it settled the ticket from its segment
    /// records (`CompletionTracker::settle_own`): every segment completed with no
    /// failure, so the scan need not read them again.
    pub clean: AtomicBool,
    pub outcome: Mutex<Outcome>,
    /// The ticket registered before it, while both wait in the tracker's
    /// registrations (host/queue/registrations.rs, which alone touches it).
    pub(super) next: AtomicPtr<TicketState>,
}

impl TicketState {
    pub fn new(first: u64, end: u64, keep_results: bool, express: bool) -> Self {
        let results = if keep_results { Vec::with_capacity((end - first) as usize) } else { Vec::new() };
        let outcome = Mutex::new(Outcome { results, ..Outcome::default() });
        Self {
            first,
            end,
            keep_results,
            per_slot: 1,
            tasks: end - first,
            express,
            done: AtomicBool::new(false),
            clean: AtomicBool::new(false),
            outcome,
            next: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    pub fn is_done(&self) -> bool {
        // Acquire: pairs with the release in `finish`, so the outcome is complete.
        self.done.load(Ordering::Acquire)
    }

    pub fn finish(&self) {
        self.done.store(true, Ordering::Release);
    }

    /// Resolves a not-yet-finished ticket as completed with no failure, its records
    /// read by its waiter (`CompletionTracker::settle_own`); whether this call did.
    /// Under the outcome's lock, which [`fail`](Self::fail) takes too: a fault's
    /// `fail_all` racing this either resolves the ticket first (it stays failed) or
    /// finds it done, never both, so a waiter's `Ok` is never overwritten after it
    /// returned (found in review; `loom_settle_clean_beside_fail`).
    pub fn settle_clean(&self) -> bool {
        let _o = self.outcome.lock().unwrap_or_else(|e| e.into_inner());
        if self.is_done() {
            return false;
        }
        // Relaxed: published by `finish`'s release, which the scan acquires.
        self.clean.store(true, Ordering::Relaxed);
        self.finish();
        true
    }

    /// Resolves a not-yet-finished ticket with `error`.
    pub fn fail(&self, error: Error) {
        if self.is_done() {
            return;
        }
        let mut o = self.outcome.lock().unwrap();
        // Again under the lock: `CompletionTracker::settle_own` finishes a ticket
        // under it too, with no other lock that `fail`'s callers hold.
        if self.is_done() {
            return;
        }
        if o.error.is_none() {
            o.error = Some(error);
        }
        // Before the lock is released: a `settle_clean` after it finds the ticket done.
        self.finish();
        drop(o);
    }
}

/// loom: a waiter settling its ticket clean races a fault failing it: one of the two
/// wins, and the outcome a waiter saw never changes after (a settle that returned true
/// leaves no error; one that lost sees the error).
#[cfg(all(test, loom))]
mod loom_ticket_state {
    use super::*;
    use loom::sync::Arc;

    #[test]
    fn loom_settle_clean_beside_fail() {
        loom::model(|| {
            let t = Arc::new(TicketState::new(0, 1, false, false));
            let h = {
                let t = t.clone();
                loom::thread::spawn(move || t.fail(Error::ShutDown))
            };
            let settled = t.settle_clean();
            let seen = t.outcome.lock().unwrap().error.clone();
            h.join().unwrap();
            let after = t.outcome.lock().unwrap().error.clone();
            assert!(t.is_done());
            assert_eq!(seen, after, "the outcome changed after the waiter read it");
            assert_eq!(settled, after.is_none());
        });
    }
}
