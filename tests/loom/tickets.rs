//! loom models of the host's ticket hand-offs (host/queue/completions.rs,
//! ticket_state.rs, notifier.rs, host/runtime/mod.rs `record_fault`): every ticket a
//! producer obtains resolves, once, whatever a fault or a shutdown does meanwhile, and
//! a future waiting on it is woken. Like the queue model, each atomic mirrors one in
//! the code with the same ordering.

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

/// `TicketState`: `done` (Release in `finish`, Acquire in `is_done`) and the outcome
/// under its mutex.
#[derive(Default)]
struct Ticket {
    done: AtomicBool,
    outcome: Mutex<Outcome>,
}

#[derive(Default, Debug)]
struct Outcome {
    results: u32,
    error: Option<&'static str>,
}

impl Ticket {
    fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
    fn finish(&self) {
        self.done.store(true, Ordering::Release);
    }
    /// `TicketState::fail`.
    fn fail(&self, e: &'static str) {
        if self.is_done() {
            return;
        }
        self.outcome.lock().unwrap().error.get_or_insert(e);
        self.finish();
    }
}

/// The tracker's scan state: its tickets and, since `fail_all`, the sticky error.
#[derive(Default)]
struct Scan {
    tickets: Vec<Arc<Ticket>>,
    closed: Option<&'static str>,
}

#[derive(Default)]
struct Runtime {
    /// The device died (set before the host records the fault, as a real fault
    /// precedes its discovery): no task completes from then on.
    dead: AtomicBool,
    /// `Shared::fault`.
    fault: Mutex<Option<&'static str>>,
    /// `CompletionTracker::scan`.
    scan: Mutex<Scan>,
}

impl Runtime {
    /// `producer::submit`: refuse if faulted, else register the ticket
    /// (`CompletionTracker::register`, which fails it at once after a `fail_all`).
    fn submit(&self) -> Option<Arc<Ticket>> {
        if self.fault.lock().unwrap().is_some() {
            return None;
        }
        let t = Arc::new(Ticket::default());
        let mut scan = self.scan.lock().unwrap();
        match scan.closed {
            Some(e) => t.fail(e),
            None => scan.tickets.push(t.clone()),
        }
        Some(t)
    }

    /// The device dies, then the host's health poll records it (`Shared::record_fault`:
    /// the first fault sticks, then `fail_all`).
    fn record_fault(&self, e: &'static str) {
        self.dead.store(true, Ordering::SeqCst);
        self.fault.lock().unwrap().get_or_insert(e);
        let mut scan = self.scan.lock().unwrap();
        scan.closed.get_or_insert(e);
        for t in scan.tickets.drain(..) {
            t.fail(e);
        }
    }

    /// `CompletionTracker::advance` finishing the front ticket: its results are read
    /// (under the outcome lock) before `finish`, under the scan lock (`try_lock`).
    fn complete_front(&self) {
        let Ok(mut scan) = self.scan.try_lock() else { return };
        // The segment records of a dead device never arrive.
        if scan.tickets.is_empty() || self.dead.load(Ordering::SeqCst) {
            return;
        }
        let t = scan.tickets.remove(0);
        t.outcome.lock().unwrap().results = 7;
        t.finish();
    }
}

/// A fault recorded while a producer submits and the scanner completes: the ticket is
/// refused, or it resolves, with its results or with the fault; never both, never
/// neither. Without `closed` (a ticket registered just after `fail_all` drained the
/// list) loom finds a ticket left unresolved forever.
#[test]
fn fault_resolves_every_ticket() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        let rt = Arc::new(Runtime::default());
        let producer = {
            let rt = rt.clone();
            thread::spawn(move || rt.submit())
        };
        let fault = {
            let rt = rt.clone();
            thread::spawn(move || rt.record_fault("device fault"))
        };
        rt.complete_front();
        let t = producer.join().unwrap();
        fault.join().unwrap();
        rt.complete_front();
        if let Some(t) = t {
            assert!(t.is_done(), "a ticket was left unresolved");
            let o = t.outcome.lock().unwrap();
            assert!(o.results == 7 || o.error == Some("device fault"), "{o:?}");
        }
    });
}

/// The future's hand-off with the notifier thread (`WaitFuture::poll`: check, register
/// the waker, check again; the notifier: finish, then wake every registered waiter
/// whose ticket is done, under the registry lock). No lost wake-up: the waiter either
/// sees the ticket done or is woken. loom reports a deadlock if the waiter parks for
/// ever.
#[test]
fn future_is_never_left_pending() {
    loom::model(|| {
        let ticket = Arc::new(Ticket::default());
        let registry: Arc<Mutex<Vec<thread::Thread>>> = Arc::new(Mutex::new(vec![]));
        let waiter = {
            let (ticket, registry) = (ticket.clone(), registry.clone());
            thread::spawn(move || {
                if ticket.is_done() {
                    return;
                }
                registry.lock().unwrap().push(thread::current());
                // Completed between the check and the registration: look again.
                while !ticket.is_done() {
                    thread::park();
                }
            })
        };
        // The notifier: the scan finishes the ticket, then wakes the done ones.
        ticket.finish();
        let woken: Vec<_> = {
            let mut r = registry.lock().unwrap();
            if ticket.is_done() { r.drain(..).collect() } else { vec![] }
        };
        woken.into_iter().for_each(|t| t.unpark());
        waiter.join().unwrap();
    });
}

/// Shutdown's `fail_all(ShutDown)` races the scanner finishing the same ticket with its
/// results: exactly one outcome wins, and a waiter that sees `done` (Acquire) sees
/// that outcome complete.
#[test]
fn shutdown_and_scan_agree_on_one_outcome() {
    loom::model(|| {
        let rt = Arc::new(Runtime::default());
        let t = rt.submit().unwrap();
        let scanner = {
            let rt = rt.clone();
            thread::spawn(move || rt.complete_front())
        };
        let waiter = {
            let t = t.clone();
            thread::spawn(move || {
                while !t.is_done() {
                    thread::yield_now();
                }
                let o = t.outcome.lock().unwrap();
                assert!(o.results == 7 || o.error.is_some(), "done without an outcome: {o:?}");
            })
        };
        rt.record_fault("shut down");
        scanner.join().unwrap();
        waiter.join().unwrap();
        let o = t.outcome.lock().unwrap();
        assert!((o.results == 7) != o.error.is_some(), "exactly one outcome: {o:?}");
    });
}
