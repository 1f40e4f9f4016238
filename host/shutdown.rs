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
//! Also here: [`Shared::quiesce`], what drops of buffers, lists and counters wait for.

use resident_shared::Task;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::backend::Health;
use crate::deadline;
use crate::lifecycle::CloseTurn;
use crate::queue::producer::{self, Origin, Source, WhenFull};
use crate::runtime::Shared;
use crate::{Error, Result};

/// After an abort, how long to wait for the workers to leave before the runtime gives
/// up on them and leaks their memory (a task that never polls `abort`).
const ABORT_GRACE: Duration = Duration::from_secs(5);

impl Shared {
    /// Waits until no task submitted before `target` can touch memory any more: they
    /// completed, or the workers are gone (shutdown, abort, device fault). False if
    /// neither happened within `timeout`: the caller must then leak what it would free.
    pub fn quiesce(&self, target: u64, timeout: Duration) -> bool {
        self.quiesce_until(target, deadline::after(timeout))
    }

    /// [`Shared::quiesce`] with a deadline (`None`: none).
    fn quiesce_until(&self, target: u64, deadline: Option<Instant>) -> bool {
        loop {
            if self.workers_gone() {
                return true;
            }
            match self.wait_completed(target, deadline) {
                Ok(()) => return true,
                Err(Error::Timeout) => return self.workers_gone(),
                // A fault or shutdown: the workers are leaving; wait for them to be gone.
                Err(_) if !deadline::passed(deadline) => std::thread::sleep(Duration::from_millis(1)),
                Err(_) => return self.workers_gone(),
            }
        }
    }

    /// Waits until every task submitted before this call has completed (or the workers
    /// are gone): what a host access to a buffer is ordered after, as a synchronous
    /// CUDA copy waits for the work before it. A thread that holds an open reservation
    /// of this runtime gets `ReservationOpen`: its tasks cannot complete before it is
    /// committed.
    pub fn settle(&self) -> Result<()> {
        if crate::reservation::open_here(self) {
            return Err(Error::ReservationOpen);
        }
        let target = self.producer.lock().unwrap_or_else(|e| e.into_inner()).next;
        if self.quiesce_until(target, None) { Ok(()) } else { self.fault().and(Err(Error::Timeout)) }
    }

    /// Drains (the sentinel runs after everything queued), aborts if the drain does not
    /// finish within `shutdown_timeout`, and resolves every unfinished ticket; returns
    /// within about `shutdown_timeout + ABORT_GRACE`. After a fault there is nothing
    /// to drain: it aborts at once and returns the fault. Called from several threads
    /// at once, one drains and every one returns its outcome once it has ended
    /// (host/lifecycle.rs).
    pub(crate) fn shutdown(&self) -> Result<()> {
        if let CloseTurn::Done(outcome) = self.life.begin_close() {
            return outcome;
        }
        // `None`: a timeout too long for the clock, i.e. no deadline.
        let deadline = deadline::after(self.config.shutdown_timeout);
        let _ = self.bind();
        let mut result = self.fault();
        // The reservation gate: no batch is reserved after the sentinel. The producer
        // lock is held only for reservations, but take it with a bound anyway.
        let mut p = match lock_until(&self.producer, deadline) {
            Some(p) => p,
            None => {
                self.abort_workers();
                result = result.and(Err(Error::Timeout));
                self.producer.lock().unwrap_or_else(|e| e.into_inner())
            }
        };
        p.closed = true;
        drop(p);
        let mut exited = false;
        if result.is_ok() {
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
            self.abort_workers();
            exited = self.backend.wait_exit(Some(ABORT_GRACE));
        }
        self.tracker.advance(&self.backend);
        if let Health::Fault(e) = self.backend.health() {
            result = Err(self.record_fault(e));
        }
        self.tracker.fail_all(&Error::ShutDown);
        self.notifier.stop();
        if !exited {
            if let Some(c) = self.backend.cuda() {
                c.context().mark_wedged();
            }
            eprintln!("resident: workers did not stop after abort (a task that never polls abort); leaking the queue memory");
        }
        self.life.finish(result.clone(), !exited);
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
