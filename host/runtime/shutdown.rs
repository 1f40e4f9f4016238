//! Stopping a runtime: drain, then cancel (docs/reliability.md, "Shutdown").
//!
//! 1. Mark the runtime closing; new submits fail with `ShutDown`.
//! 2. Drain: the terminate sentinel goes in after everything queued; every queued task
//!    runs and the workers leave.
//! 3. Cancel, if the drain is not done within `shutdown_timeout` (the sentinel commits
//!    after every batch reserved before it, and one may wait for room that hung tasks
//!    never free): write `abort`, give the workers `ABORT_GRACE` to leave; what did not
//!    run never runs.
//! 4. Resolve every remaining ticket (`ShutDown`), stop the notifier. Memory is freed
//!    when the last owner of the runtime drops it, unless workers never left: then it
//!    is leaked, never freed under running code.
//!
//! Also here: [`Shared::settle`], what host accesses to buffers wait for.

use resident_shared::Task;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::backend::Health;
use crate::queue::producer::{self, Origin, Source, WhenFull};
use crate::runtime::Shared;
use crate::runtime::lifecycle::CloseTurn;
use crate::util::deadline;
use crate::{Error, Result};

/// After an abort, how long to wait for the workers to leave before the runtime gives
/// up on them and leaks their memory (a task that never polls `abort`).
const ABORT_GRACE: Duration = Duration::from_secs(5);

impl Shared {
    /// Waits until every task of `from..` submitted before this call has completed (or
    /// the workers are gone): what a host access to a buffer born at `from` (no task
    /// before it can name it) is ordered after, as a synchronous CUDA copy waits for
    /// the work before it. Tasks before `from` are not waited for, nor tickets that
    /// hold none of `from..` (the tracker resolves tickets in any order). A thread that
    /// holds an open reservation of this runtime gets `ReservationOpen`: its tasks
    /// cannot complete before it is committed. `Timeout` past `deadline`.
    pub fn settle(&self, from: u64, deadline: Option<Instant>) -> Result<()> {
        if crate::queue::reservation::open_here(self) {
            return Err(Error::ReservationOpen);
        }
        // After a fault the tickets are resolved, not their tasks (a hung task may still
        // run): no wait can say more, the fault is the answer.
        self.fault()?;
        let to = self.producer.lock().unwrap_or_else(|e| e.into_inner()).next;
        if to <= from {
            return Ok(());
        }
        // The wait ended because the workers are gone rather than drained: perhaps a
        // dead device whose fault nobody has polled yet (a CPU worker that panicked:
        // every worker left at its abort), which must be the answer, not the memory.
        let gone = std::cell::Cell::new(false);
        let settled = || {
            self.tracker.advance(&self.backend);
            if self.workers_gone() {
                gone.set(true);
                return true;
            }
            self.tracker.settled(from, to)
        };
        match self.wait_until(deadline, settled) {
            Ok(()) if gone.get() => self.fault_now(),
            Ok(()) => self.fault(),
            Err(Error::ShutDown) => loop {
                // A shutdown resolves tickets too: wait until the workers are gone
                // (nothing writes any more), within the deadline, unless they never
                // leave (leaked) or a fault is recorded meanwhile.
                self.fault()?;
                if self.workers_gone() {
                    return Ok(());
                }
                if (self.life.is_stopped() && self.life.leaked()) || deadline::passed(deadline) {
                    return Err(if deadline::passed(deadline) { Error::Timeout } else { self.stopped() });
                }
                std::thread::sleep(Duration::from_millis(1));
            },
            Err(e) => Err(e),
        }
    }

    /// Drains (the sentinel runs after everything queued), aborts if the drain does not
    /// finish within `shutdown_timeout`, and resolves every unfinished ticket; returns
    /// within about `shutdown_timeout + ABORT_GRACE`. After a fault there is nothing
    /// to drain: it aborts at once and returns the fault. Called from several threads
    /// at once, one drains and every one returns its outcome once it has ended
    /// (host/runtime/lifecycle.rs).
    pub(crate) fn shutdown(&self) -> Result<()> {
        if let CloseTurn::Done(outcome) = self.life.begin_close() {
            return outcome;
        }
        // `None`: a timeout too long for the clock, i.e. no deadline.
        let deadline = deadline::after(self.config.shutdown_timeout);
        let _ = self.bind();
        // The backend's fault too, not only a recorded one: a close that a fault
        // prompted (a CPU worker that panicked, a kernel that trapped, with no health
        // poll since) records it now, before it closes the gate or aborts anything, so
        // that producers refused from here on get the fault (`Shared::stopped`) and
        // nothing is drained into a dead device.
        let mut result = self.fault_now();
        // The reservation gate: no batch is reserved after the sentinel. The producer
        // lock is held only for reservations, but take it with a bound anyway.
        let mut p = match lock_until(&self.producer, deadline) {
            Some(p) => p,
            None => {
                // The fault, if the backend has one, before the abort (as the watchdog).
                if let Err(f) = self.fault_now() {
                    result = Err(f);
                }
                self.abort_workers();
                result = result.and(Err(Error::Timeout));
                self.producer.lock().unwrap_or_else(|e| e.into_inner())
            }
        };
        p.closed = true;
        // Kernels that exited an idle queue have nothing to drain: no relaunch just to
        // stop them (nor one inside `Sharing::with_kernel_out`, which keeps them out).
        let parked = self.backend.is_parked();
        drop(p);
        // Peer links into this runtime: their pushes fail from now on instead of
        // waiting for a relay that is leaving (host/multi/peer_link.rs).
        if let Some(c) = self.backend.cuda() {
            c.close_inboxes();
        }
        self.cut_peers();
        let mut exited = parked;
        if result.is_ok() && !parked {
            let until = deadline.map_or(WhenFull::Wait, WhenFull::Until);
            result = producer::submit(self, Source::Host(&[Task::terminate()]), false, until, Origin::Runtime).map(|_| ());
            if result.is_ok() {
                exited = self.backend.wait_exit(deadline::remaining(deadline));
                if !exited {
                    result = Err(Error::Timeout);
                }
            }
        }
        if !exited {
            // A fault that came during the drain, before the abort that it may have
            // caused tasks to end with (as the watchdog: record, then abort).
            if let Err(f) = self.fault_now() {
                result = Err(f);
            }
            self.abort_workers();
            exited = self.backend.wait_exit(Some(ABORT_GRACE));
        }
        // Every record the workers wrote before they left (a blocking scan: a skipped
        // one would leave finished tickets to `fail_all`).
        self.tracker.advance_all(&self.backend);
        if let Health::Fault(e) = self.backend.health() {
            result = Err(self.record_fault(e));
        }
        self.tracker.fail_all(&Error::ShutDown);
        self.notifier.stop();
        if !exited {
            if let Some(c) = self.backend.cuda() {
                c.context().mark_wedged();
            }
            crate::util::report::report!(
                error,
                "workers did not stop after abort (a task that never polls abort); leaking the queue memory"
            );
        }
        self.life.finish(result.clone(), !exited);
        // What drops left for the workers, now that none runs (kept if one may).
        self.reclaim();
        result
    }
}

/// Takes `m` if it frees before `deadline` (`None`: no deadline).
fn lock_until<T>(m: &Mutex<T>, deadline: Option<Instant>) -> Option<std::sync::MutexGuard<'_, T>> {
    loop {
        match m.try_lock() {
            Ok(g) => return Some(g),
            Err(std::sync::TryLockError::Poisoned(e)) => return Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) if deadline.is_none_or(|d| Instant::now() < d) => {
                std::thread::sleep(Duration::from_micros(200))
            }
            Err(std::sync::TryLockError::WouldBlock) => return None,
        }
    }
}
