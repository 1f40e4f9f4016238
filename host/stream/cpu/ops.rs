//! What the stream API's operations do on a CPU stream: recorded while the stream
//! captures ([`Captured`], replayed by `Graph::launch`), else queued, the tracked ones
//! after the access tracker's waits.
//!
//! What a capture records, and what it refuses:
//! - launches (the kernel, the grid and the parameter bytes, copied at capture), device
//!   copies and the built-in kernels (with their buffers, which the graph keeps alive;
//!   each replay goes through the access tracker again, so a replay is ordered with
//!   other streams' uses of those buffers like a fresh call), event records, and waits
//!   for events and streams (resolved at each replay, as a wait is when it is called);
//! - not: host callbacks (a `FnOnce` runs once), copies to and from pinned memory (the
//!   memory is lent only until the scope ends; a graph may outlive it), ticket waits (a
//!   ticket's tasks complete once): these return `Error::Config` while capturing.

use std::ops::Range;
use std::sync::Arc;

use super::mark::CpuEvent;
use super::queue::{CpuStream, Op, Queue};
use crate::stream::device_memory::DeviceMem;
use crate::stream::stream::Stream;
use crate::stream::tracker::{Use, ordered};
use crate::{Error, Result};

/// A replayable body: a launch, a copy, a built-in kernel.
pub(crate) type Body = Arc<dyn Fn() -> Result<()> + Send + Sync>;

/// One device range a captured operation touches, owned by the graph.
pub(crate) struct OwnedUse {
    mem: Arc<DeviceMem>,
    bytes: Range<usize>,
    write: bool,
}

/// One recorded operation.
pub(crate) enum Captured {
    Launch(Body),
    Tracked { uses: Vec<OwnedUse>, body: Body },
    Record(Arc<CpuEvent>),
    WaitEvent(Arc<CpuEvent>),
    WaitStream(Arc<Queue>),
}

impl Stream {
    /// A launch (untracked, replayable).
    pub(crate) fn cpu_launch(&self, q: &CpuStream, body: Body) -> Result<()> {
        if q.capture(|| Captured::Launch(body.clone())) {
            return Ok(());
        }
        q.run(move || body())
    }

    /// A replayable operation on the device ranges `uses`.
    pub(crate) fn cpu_tracked(&self, q: &CpuStream, uses: &[Use<'_>], body: Body) -> Result<()> {
        let owned = || uses.iter().map(|u| OwnedUse { mem: u.mem.clone(), bytes: u.bytes.clone(), write: u.write }).collect();
        if q.capture(|| Captured::Tracked { uses: owned(), body: body.clone() }) {
            return Ok(());
        }
        self.cpu_tracked_enqueue(q, uses, move || body())
    }

    /// An operation on `uses` that runs once (it borrows memory lent for a scope):
    /// refused while capturing.
    pub(crate) fn cpu_tracked_once(
        &self,
        q: &CpuStream,
        what: &str,
        uses: &[Use<'_>],
        f: impl FnOnce() -> Result<()> + Send + 'static,
    ) -> Result<()> {
        self.cpu_refuse_capture(q, what)?;
        self.cpu_tracked_enqueue(q, uses, f)
    }

    /// An untracked operation that runs once: refused while capturing.
    pub(crate) fn cpu_once(&self, q: &CpuStream, what: &str, f: impl FnOnce() -> Result<()> + Send + 'static) -> Result<()> {
        self.cpu_refuse_capture(q, what)?;
        q.run(f)
    }

    fn cpu_refuse_capture(&self, q: &CpuStream, what: &str) -> Result<()> {
        if q.is_capturing() {
            return Err(Error::Config(format!("{what} cannot be captured into a graph on the CPU backend")));
        }
        Ok(())
    }

    fn cpu_tracked_enqueue(&self, q: &CpuStream, uses: &[Use<'_>], f: impl FnOnce() -> Result<()> + Send + 'static) -> Result<()> {
        // The operation holds the allocations it touches until it has run: dropping a
        // buffer meanwhile frees nothing under it.
        let keep: Vec<Arc<DeviceMem>> = uses.iter().map(|u| u.mem.clone()).collect();
        ordered(self.on(), uses, || {
            q.run(move || {
                let r = f();
                drop(keep);
                r
            })
        })
    }

    pub(crate) fn cpu_record(&self, q: &CpuStream, e: &Arc<CpuEvent>) -> Result<()> {
        if q.capture(|| Captured::Record(e.clone())) {
            return Ok(());
        }
        let m = q.queue().record_now()?;
        e.set(m);
        Ok(())
    }

    pub(crate) fn cpu_wait_event(&self, q: &CpuStream, e: &Arc<CpuEvent>) -> Result<()> {
        if q.capture(|| Captured::WaitEvent(e.clone())) {
            return Ok(());
        }
        match e.latest() {
            Some(m) if !m.is_complete() => q.submit(Op::Wait(m)),
            _ => Ok(()),
        }
    }

    pub(crate) fn cpu_wait_queue(&self, q: &CpuStream, other: &Arc<Queue>) -> Result<()> {
        if q.capture(|| Captured::WaitStream(other.clone())) {
            return Ok(());
        }
        if Arc::ptr_eq(other, q.queue()) {
            return Ok(()); // stream order already
        }
        let m = other.record_now()?;
        q.submit(Op::Wait(m))
    }

    /// Enqueues one recorded operation again (or records it, if this stream captures).
    pub(crate) fn cpu_replay(&self, q: &CpuStream, item: &Captured) -> Result<()> {
        match item {
            Captured::Launch(body) => self.cpu_launch(q, body.clone()),
            Captured::Tracked { uses, body } => {
                let uses: Vec<Use<'_>> = uses.iter().map(|u| Use { mem: &u.mem, bytes: u.bytes.clone(), write: u.write }).collect();
                self.cpu_tracked(q, &uses, body.clone())
            }
            Captured::Record(e) => self.cpu_record(q, e),
            Captured::WaitEvent(e) => self.cpu_wait_event(q, e),
            Captured::WaitStream(other) => self.cpu_wait_queue(q, other),
        }
    }
}
