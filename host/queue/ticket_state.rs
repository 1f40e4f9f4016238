//! What a ticket knows: its range of sequence numbers and, once done, its outcome.

use crate::sync::Mutex;
use crate::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use resident_shared::Status;

use crate::Error;

#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Inline results in sequence order, when the submitter asked for them.
    pub results: Vec<u64>,
    /// The first task that failed on the device.
    pub failure: Option<(u64, Status)>,
    /// Set when the ticket cannot complete (device fault, abort on shutdown).
    pub error: Option<Error>,
}

#[derive(Debug)]
pub(crate) struct TicketState {
    pub first: u64,
    pub end: u64,
    pub keep_results: bool,
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

    /// Resolves a not-yet-finished ticket with `error`.
    pub fn fail(&self, error: Error) {
        if self.is_done() {
            return;
        }
        let mut o = self.outcome.lock().unwrap();
        if o.error.is_none() {
            o.error = Some(error);
        }
        drop(o);
        self.finish();
    }
}
