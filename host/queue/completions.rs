//! The completion tracker: scans the completion ring in sequence order, hands each
//! record to the ticket that owns it, and publishes how far everything is complete.
//!
//! Any thread that waits drives the scan (`try_lock`: one scanner at a time; the others
//! read `completed`). No background thread is needed, and a waiter sees its own
//! completion as soon as the device's write lands.

use resident_shared::{Status, stamp_for};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::ticket_state::TicketState;
use crate::Error;
use crate::backend::Backend;

pub(crate) struct CompletionTracker {
    scan: Mutex<Scan>,
    /// Every task before this sequence number has completed and its record was read;
    /// its ring slot (and completion slot) may be reused.
    completed: AtomicU64,
}

struct Scan {
    prefix: u64,
    /// Tickets in sequence order; together they cover every published slot.
    tickets: VecDeque<Arc<TicketState>>,
}

impl CompletionTracker {
    pub fn new() -> Self {
        Self { scan: Mutex::new(Scan { prefix: 0, tickets: VecDeque::new() }), completed: AtomicU64::new(0) }
    }

    /// Registers a ticket before its tasks are published (else the scan could pass
    /// them with no owner). Called under the producer lock, in sequence order.
    pub fn register(&self, t: Arc<TicketState>) {
        self.scan.lock().unwrap().tickets.push_back(t);
    }

    pub fn completed(&self) -> u64 {
        // Acquire: pairs with the release in `advance`; whoever sees `completed >= s`
        // also sees the scanner's reads of the records before `s` done.
        self.completed.load(Ordering::Acquire)
    }

    /// Reads every newly completed record; returns the new `completed`.
    pub fn advance(&self, backend: &Backend) -> u64 {
        let Ok(mut scan) = self.scan.try_lock() else { return self.completed() };
        let scan = &mut *scan;
        while let Some(t) = scan.tickets.front().cloned() {
            let from = scan.prefix.max(t.first);
            let mut seq = from;
            let mut failure = None;
            let mut results = Vec::new();
            while seq < t.end {
                let rec = backend.completion(seq);
                // Acquire: pairs with the worker's fence.acq_rel.sys + st.relaxed.sys of
                // `stamp` (device/src/queue.rs, step 4), or with the CPU worker's
                // fence(AcqRel) + relaxed store. After it, `status` and `result` hold
                // this task's values.
                let stamp = unsafe { AtomicU32::from_ptr(&raw const (*rec).stamp as *mut u32) }.load(Ordering::Acquire);
                if stamp != stamp_for(seq as u32) {
                    break;
                }
                let (status, result) = unsafe { (std::ptr::read_volatile(&raw const (*rec).status), std::ptr::read_volatile(&raw const (*rec).result)) };
                if status != 0 && failure.is_none() {
                    failure = Some((seq, Status::from_u32(status).unwrap_or(Status::BadArgs)));
                }
                if t.keep_results {
                    results.push(result);
                }
                seq += 1;
            }
            if seq > from {
                let mut o = t.outcome.lock().unwrap();
                o.results.extend_from_slice(&results);
                if o.failure.is_none() {
                    o.failure = failure;
                }
            }
            scan.prefix = seq;
            if seq < t.end {
                break;
            }
            t.finish();
            scan.tickets.pop_front();
        }
        // Release: see `completed`.
        self.completed.store(scan.prefix, Ordering::Release);
        scan.prefix
    }

    /// Resolves every unfinished ticket with `error` (fault or abort): no waiter hangs.
    pub fn fail_all(&self, error: &Error) {
        let mut scan = self.scan.lock().unwrap();
        for t in scan.tickets.drain(..) {
            t.fail(error.clone());
        }
    }
}
