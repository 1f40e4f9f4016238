//! What the stream API's operations do on a CPU stream: recorded while the stream
//! captures (`capture`: what is recorded and what is refused), else queued, the tracked
//! ones after the access tracker's waits; and the replay of what a capture recorded.
//! The public methods (`host/stream/*.rs`) check their arguments, hold the capture gate
//! where an operation must run once, and call these.

use std::sync::Arc;

use super::capture::{Body, Captured, OwnedUse};
use super::mark::CpuEvent;
use super::queue::{CpuStream, Op, Queue};
use crate::Result;
use crate::stream::device_memory::DeviceMem;
use crate::stream::tracker::{On, Use, ordered};

impl CpuStream {
    /// A launch (untracked, replayable).
    pub(crate) fn launch(&self, body: Body) -> Result<()> {
        if self.capture_buffer().record(|| Captured::Launch(body.clone())) {
            return Ok(());
        }
        self.run(move || body())
    }

    /// A replayable operation on the device ranges `uses`; `on` is this stream as the
    /// tracker knows it.
    pub(crate) fn tracked(&self, on: On<'_>, uses: &[Use<'_>], body: Body) -> Result<()> {
        let owned = || uses.iter().map(|u| OwnedUse { mem: u.mem.clone(), bytes: u.bytes.clone(), write: u.write }).collect();
        if self.capture_buffer().record(|| Captured::Tracked { uses: owned(), body: body.clone() }) {
            return Ok(());
        }
        self.run_tracked(on, uses, move || body())
    }

    /// An operation on `uses` that runs once (never recorded: the caller holds the
    /// capture gate, so the stream does not capture), after the tracker's waits.
    pub(crate) fn run_tracked(&self, on: On<'_>, uses: &[Use<'_>], f: impl FnOnce() -> Result<()> + Send + 'static) -> Result<()> {
        // The operation holds the allocations it touches until it has run: dropping a
        // buffer meanwhile frees nothing under it.
        let keep: Vec<Arc<DeviceMem>> = uses.iter().map(|u| u.mem.clone()).collect();
        ordered(on, uses, || {
            self.run(move || {
                let r = f();
                drop(keep);
                r
            })
        })
    }

    pub(crate) fn record_event(&self, e: &Arc<CpuEvent>) -> Result<()> {
        if self.capture_buffer().record(|| Captured::Record(e.clone())) {
            return Ok(());
        }
        let m = self.queue().record_now()?;
        // After the submit: a record that could not be queued must not become the
        // event's meaning (a wait on it would never end).
        e.set(m);
        Ok(())
    }

    pub(crate) fn wait_event(&self, e: &Arc<CpuEvent>) -> Result<()> {
        if self.capture_buffer().record(|| Captured::WaitEvent(e.clone())) {
            return Ok(());
        }
        match e.latest() {
            Some(m) if !m.is_complete() => self.submit(Op::Wait(m)),
            _ => Ok(()),
        }
    }

    pub(crate) fn wait_queue(&self, other: &Arc<Queue>) -> Result<()> {
        if self.capture_buffer().record(|| Captured::WaitStream(other.clone())) {
            return Ok(());
        }
        if Arc::ptr_eq(other, self.queue()) {
            return Ok(()); // stream order already
        }
        let m = other.record_now()?;
        self.submit(Op::Wait(m))
    }

    /// Enqueues one recorded operation again (or records it, if this stream captures).
    pub(crate) fn replay(&self, on: On<'_>, item: &Captured) -> Result<()> {
        match item {
            Captured::Launch(body) => self.launch(body.clone()),
            Captured::Tracked { uses, body } => {
                let uses: Vec<Use<'_>> = uses.iter().map(|u| Use { mem: &u.mem, bytes: u.bytes.clone(), write: u.write }).collect();
                self.tracked(on, &uses, body.clone())
            }
            Captured::Record(e) => self.record_event(e),
            Captured::WaitEvent(e) => self.wait_event(e),
            Captured::WaitStream(other) => self.wait_queue(other),
        }
    }
}
