//! Tickets: a handle on one submitted batch, to wait for it and read its results.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::queue::ticket_state::TicketState;
use crate::runtime::Shared;
use crate::{Error, Result};

/// One submitted batch. Dropping a ticket does not cancel its tasks.
#[must_use = "a ticket is how to learn whether the batch ran (and its results); dropping it does not cancel the tasks"]
pub struct Ticket {
    pub(crate) state: Arc<TicketState>,
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ticket").field("first", &self.state.first).field("end", &self.state.end).finish()
    }
}

impl Ticket {
    /// Sequence number of the batch's first task.
    pub fn first_seq(&self) -> u64 {
        self.state.first
    }

    /// Number of tasks in the batch.
    pub fn len(&self) -> usize {
        self.state.tasks as usize
    }

    /// Whether the ticket covers no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The outcome if every task has completed (or the batch failed), without blocking.
    pub fn try_wait(&self) -> Option<Result<()>> {
        self.shared.tracker.advance(&self.shared.backend);
        self.state.is_done().then(|| self.outcome())
    }

    /// Cancels the batch, without waiting: its tasks that wait on a counter, or poll for
    /// cancellation (`spin`; a task of yours that calls `TaskCx::cancelled`), end at
    /// once with [`resident_shared::Status::Cancelled`]. Tasks that do not wait or poll
    /// run as usual (nothing can stop a running warp that does not look), and so do
    /// tasks pushed on the device. The ticket resolves as usual, once every task has
    /// completed: with `TaskFailed { status: Cancelled, .. }` if one ended so. Nothing
    /// else is cancelled; dropping a ticket cancels nothing.
    pub fn cancel(&self) -> Result<()> {
        if self.state.is_done() {
            return Ok(());
        }
        let seg = self.shared.tracker.segment_size() as u64;
        let _ = self.shared.bind();
        // Segments are cut from the ticket's start (`resident_shared::segment`).
        let mut first = self.state.first;
        while first < self.state.end {
            self.shared.backend.cancel_segment(first)?;
            first += seg;
        }
        Ok(())
    }

    /// Waits until every task of the batch has completed. Never hangs on a dead device:
    /// a fault or an exited kernel ends the wait with an error.
    pub fn wait(&self) -> Result<()> {
        self.wait_inner(None)
    }

    /// Like [`Ticket::wait`], giving up with [`Error::Timeout`] after `timeout` (the
    /// tasks keep running).
    pub fn wait_timeout(&self, timeout: Duration) -> Result<()> {
        self.wait_inner(Some(timeout))
    }

    /// Waits, then returns each task's inline result in submission order. Only for
    /// batches submitted with [`crate::Batch::results`] (otherwise
    /// [`Error::NoResults`]); the results are handed out once.
    pub fn results(&self) -> Result<Vec<u64>> {
        if !self.state.keep_results {
            return Err(Error::NoResults);
        }
        self.wait()?;
        Ok(std::mem::take(&mut self.state.outcome.lock().unwrap().results))
    }

    /// [`Ticket::results`], each read as the `T` its task returned with
    /// `resident_device::inline_result` (any `Pod` of up to 8 bytes).
    pub fn results_as<T: bytemuck::Pod>(&self) -> Result<Vec<T>> {
        Ok(self.results()?.into_iter().map(resident_shared::from_inline_result).collect())
    }

    /// Waits without blocking a thread: a future for executors (tokio, async-std,
    /// `futures::executor`). A background thread of the runtime polls completions while
    /// futures wait and wakes each one when its ticket is done; a device fault or a
    /// shutdown resolves it with that error. `ticket.await` works too ([`IntoFuture`]).
    pub fn wait_async(&self) -> WaitFuture<'_> {
        WaitFuture { ticket: self, wait: AsyncWait::default() }
    }

    fn wait_inner(&self, timeout: Option<Duration>) -> Result<()> {
        let _span = tracing::trace_span!(target: "resident", "wait", first = self.state.first, end = self.state.end).entered();
        // A reservation this thread holds, at or before this batch, is published only
        // when this thread commits it: the wait would be for itself.
        if !self.state.is_done() && crate::queue::reservation::open_before(&self.shared, self.state.end) {
            return Err(Error::ReservationOpen);
        }
        let deadline = timeout.and_then(crate::util::deadline::after);
        crate::queue::phases::begin();
        // A ticket another thread's scan resolved needs no scan of this one (each takes
        // the scanner's lock, which every waiter and producer contends for), nor one
        // whose own records say it is done (`settle_own`).
        self.shared.wait_until(deadline, || {
            self.state.is_done() || self.shared.tracker.settle_own(&self.shared.backend, &self.state) || {
                self.shared.tracker.advance(&self.shared.backend);
                self.state.is_done()
            }
        })?;
        // Settled by this thread, perhaps with no scan: keep `completed` from lagging.
        self.shared.tracker.nudge(&self.shared.backend, self.state.end);
        crate::queue::phases::lap(crate::queue::phases::Phase::Wait);
        self.outcome()
    }

    fn outcome(&self) -> Result<()> {
        let o = self.state.outcome.lock().unwrap();
        if let Some(e) = &o.error {
            return Err(e.clone());
        }
        let (failure, o_in_slot) = (o.failure, o.failure_in_slot);
        // Not held into `fault_now`, which may record the fault (`fail_all` takes the
        // tracker's lock, and the scan takes outcome locks under it).
        drop(o);
        match failure {
            Some((seq, status)) => {
                // Ended by an abort (or, for a parent, a child that was): if a fault
                // raised that abort, the fault is the answer (guarantee 5), as it is
                // when the watchdog records `TaskHung` before it aborts. The CPU
                // backend's workers abort themselves when one panics, before the runtime
                // has recorded anything; their fault is visible here (the chain in
                // `Shared::fault_now`) and is recorded now if nobody has. An abort with
                // no fault (shutdown past its timeout) still reads `TaskFailed { Aborted }`.
                if matches!(status, resident_shared::Status::Aborted | resident_shared::Status::ChildFailed) {
                    self.shared.fault_now()?;
                }
                // A list chunk's slot stands for `per_slot` tasks; its record names the
                // failed one among them.
                let index = seq.saturating_sub(self.state.first) * self.state.per_slot as u64 + o_in_slot;
                Err(Error::TaskFailed { index, seq, status })
            }
            None => Ok(()),
        }
    }
}

/// The future of [`Ticket::wait_async`].
#[must_use = "futures do nothing unless polled"]
pub struct WaitFuture<'a> {
    ticket: &'a Ticket,
    wait: AsyncWait,
}

/// What a future of a ticket keeps between polls.
#[derive(Default)]
struct AsyncWait {
    /// Its id with the notifier, once registered (0: not registered).
    id: u64,
    /// It spun once already (the first poll spins, later ones do not).
    spun: bool,
}

impl AsyncWait {
    /// One poll: done? Else, on the first poll only, spin for up to
    /// `RuntimeConfig::async_spin` (a short task completes within it, and the future is
    /// ready without a thread hop: no notifier wake-up, no executor wake-up); then
    /// register with the notifier, which wakes the latest waker once the ticket is done.
    fn poll(&mut self, t: &Ticket, cx: &mut Context<'_>) -> Poll<Result<()>> {
        if let Some(r) = t.try_wait() {
            return Poll::Ready(r);
        }
        // As `Ticket::wait`: a reservation of this thread before the batch's end holds it
        // back, and an executor on this thread would wait for itself.
        if crate::queue::reservation::open_before(&t.shared, t.state.end) {
            return Poll::Ready(Err(Error::ReservationOpen));
        }
        if !self.spun {
            self.spun = true;
            let spin = t.shared.config.async_spin;
            if !spin.is_zero() {
                let start = Instant::now();
                while start.elapsed() < spin {
                    std::hint::spin_loop();
                    if let Some(r) = t.try_wait() {
                        return Poll::Ready(r);
                    }
                }
            }
        }
        if self.id == 0 {
            self.id = crate::queue::notifier::Notifier::next_id();
        }
        t.shared.notifier.register(t.shared.progress(), self.id, &t.state, cx.waker());
        // Completed between the check and the registration: the notifier may have
        // missed it, so look again.
        match t.try_wait() {
            Some(r) => Poll::Ready(r),
            None => Poll::Pending,
        }
    }

    fn drop(&mut self, t: &Ticket) {
        if self.id != 0 {
            t.shared.notifier.deregister(self.id);
        }
    }
}

impl Future for WaitFuture<'_> {
    type Output = Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let this = &mut *self;
        this.wait.poll(this.ticket, cx)
    }
}

impl Drop for WaitFuture<'_> {
    fn drop(&mut self) {
        self.wait.drop(self.ticket);
    }
}

/// The owned form of [`WaitFuture`], for `ticket.await`.
#[must_use = "futures do nothing unless polled"]
pub struct TicketFuture {
    ticket: Ticket,
    wait: AsyncWait,
}

impl Future for TicketFuture {
    type Output = Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let this = &mut *self;
        this.wait.poll(&this.ticket, cx)
    }
}

impl Drop for TicketFuture {
    fn drop(&mut self) {
        self.wait.drop(&self.ticket);
    }
}

impl IntoFuture for Ticket {
    type Output = Result<()>;
    type IntoFuture = TicketFuture;

    fn into_future(self) -> TicketFuture {
        TicketFuture { ticket: self, wait: AsyncWait::default() }
    }
}
