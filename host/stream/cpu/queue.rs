//! A CPU stream: a queue of operations and the one thread that runs them, in order.
//!
//! Owns: the queue, its thread (started at the first operation, so a stream that is
//! never used costs no thread), the count of operations enqueued and run (what
//! `synchronize` and `is_idle` compare), the sticky failure, and the capture buffer.
//! Does not own: what an operation does (closures built by the stream API), nor the
//! cross-stream order of device memory (the tracker enqueues [`Op::Wait`]s for it).
//!
//! Failure is sticky, as a CUDA context's: after an operation fails (returns an error
//! or panics) the thread skips every later closure and wait, and `synchronize` reports
//! the error ever after. Records still complete, so that no other stream waiting on
//! this one waits forever; and every operation is still counted as run only once the
//! thread is past it, so `synchronize` never returns while one may still touch memory.
//!
//! Blocking calls of the stream API (`synchronize`, `Event::synchronize`, `to_vec`, a
//! scope...) are refused on the threads of CPU streams ([`refuse_blocking`]): a host
//! callback that waited for a stream could wait for work queued behind itself, and
//! never return.

use std::cell::Cell;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::mark::Mark;
use super::ops::Captured;
use crate::{Error, Result};

/// One operation of a CPU stream.
pub(crate) enum Op {
    /// Runs on the stream's thread: a copy, a launch, a host callback, a ticket wait.
    Run(Box<dyn FnOnce() -> Result<()> + Send>),
    /// Completes the mark: an event record.
    Record(Arc<Mark>),
    /// Blocks the stream until the mark is complete: an event wait.
    Wait(Arc<Mark>),
}

/// Whether a stream's work is done, still running, or failed (as `cuStreamQuery`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum QueueState {
    Idle,
    Busy,
    Failed(Error),
}

#[derive(Default)]
struct State {
    ops: VecDeque<Op>,
    enqueued: u64,
    /// Operations the thread is past (run, or skipped after a failure).
    done: u64,
    failed: Option<Error>,
    /// The owning `CpuStream` is gone: the thread runs what is queued, then exits.
    closing: bool,
    /// The thread has exited (or was never started and never will be).
    exited: bool,
    thread: Option<JoinHandle<()>>,
    /// While capturing: what the stream API recorded instead of enqueueing.
    capture: Option<Vec<Captured>>,
}

/// The shared part of a CPU stream: its thread holds it, and so may a captured graph
/// that waits for the stream.
pub(crate) struct Queue {
    state: Mutex<State>,
    /// Signalled when an operation is queued or the stream closes (the thread waits).
    work: Condvar,
    /// Signalled when the thread is past an operation, or exits (waiters wait).
    progress: Condvar,
    name: String,
}

std::thread_local! {
    static ON_STREAM_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is a CPU stream's (running one of its operations).
pub(crate) fn on_stream_thread() -> bool {
    ON_STREAM_THREAD.with(|c| c.get())
}

/// `Err` if the calling thread is a CPU stream's: `what` would block it, and could wait
/// for work queued behind the operation that calls it.
pub(crate) fn refuse_blocking(what: &str) -> Result<()> {
    if on_stream_thread() {
        return Err(Error::Config(format!(
            "{what} blocks, and was called on a CPU stream's thread (a host callback): it could wait for work queued behind itself"
        )));
    }
    Ok(())
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_else(|| "a panic".into())
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding it; a poisoned lock still holds valid counts.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `op`, starting the thread at the first one.
    pub fn submit(self: &Arc<Self>, op: Op) -> Result<()> {
        let mut s = self.lock();
        if s.exited {
            // Only a captured graph can reach a stream whose handle is gone, and only
            // with records and waits: all its work is done, so a record is reached now.
            return match op {
                Op::Record(m) => {
                    m.complete();
                    Ok(())
                }
                Op::Wait(_) => Ok(()),
                Op::Run(_) => Err(Error::Config("an operation was enqueued on a CPU stream that is gone".into())),
            };
        }
        if s.thread.is_none() && !s.closing {
            let q = self.clone();
            let h = std::thread::Builder::new()
                .name(self.name.clone())
                .spawn(move || q.work())
                .map_err(|e| Error::Config(format!("cannot start a CPU stream's thread: {e}")))?;
            s.thread = Some(h);
        }
        s.ops.push_back(op);
        s.enqueued += 1;
        self.work.notify_one();
        Ok(())
    }

    /// A record of the work queued so far: the returned mark completes when the thread
    /// is past it.
    pub fn record_now(self: &Arc<Self>) -> Result<Arc<Mark>> {
        let m = Mark::new();
        self.submit(Op::Record(m.clone()))?;
        Ok(m)
    }

    /// The stream's thread: runs operations in order until the stream closes.
    fn work(&self) {
        ON_STREAM_THREAD.with(|c| c.set(true));
        loop {
            let (op, failed) = {
                let mut s = self.lock();
                loop {
                    if let Some(op) = s.ops.pop_front() {
                        break (op, s.failed.is_some());
                    }
                    if s.closing {
                        s.exited = true;
                        self.progress.notify_all();
                        return;
                    }
                    s = self.work.wait(s).unwrap_or_else(|p| p.into_inner());
                }
            };
            // Outside the lock: an operation may take long, wait for other streams, or
            // enqueue on this one (a callback).
            let outcome = match op {
                Op::Run(f) if !failed => match catch_unwind(AssertUnwindSafe(f)) {
                    Ok(r) => r,
                    Err(p) => Err(Error::DeviceFault(format!("an operation panicked on a CPU stream: {}", panic_message(&*p)))),
                },
                Op::Run(f) => {
                    drop(f);
                    Ok(())
                }
                Op::Record(m) => {
                    m.complete();
                    Ok(())
                }
                Op::Wait(m) => {
                    if !failed {
                        m.wait();
                    }
                    Ok(())
                }
            };
            let mut s = self.lock();
            if let Err(e) = outcome {
                s.failed.get_or_insert(e);
            }
            s.done += 1;
            self.progress.notify_all();
        }
    }

    /// Blocks until the thread is past everything queued before this call.
    fn wait_done(&self) -> Option<Error> {
        let mut s = self.lock();
        let target = s.enqueued;
        while s.done < target && !s.exited {
            s = self.progress.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.failed.clone()
    }
}

/// A CPU stream: the handle that owns a [`Queue`] and closes it when dropped.
pub(crate) struct CpuStream {
    q: Arc<Queue>,
}

impl std::fmt::Debug for CpuStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuStream").field("name", &self.q.name).finish_non_exhaustive()
    }
}

impl CpuStream {
    pub fn new(name: String) -> Self {
        Self { q: Arc::new(Queue { state: Mutex::default(), work: Condvar::new(), progress: Condvar::new(), name }) }
    }

    pub fn queue(&self) -> &Arc<Queue> {
        &self.q
    }

    pub fn submit(&self, op: Op) -> Result<()> {
        self.q.submit(op)
    }

    /// Queues a closure.
    pub fn run(&self, f: impl FnOnce() -> Result<()> + Send + 'static) -> Result<()> {
        self.q.submit(Op::Run(Box::new(f)))
    }

    /// Blocks until everything queued so far has run; the stream's failure, if any.
    pub fn synchronize(&self) -> Result<()> {
        refuse_blocking("Stream::synchronize")?;
        match self.q.wait_done() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    pub fn state(&self) -> QueueState {
        let s = self.q.lock();
        match &s.failed {
            Some(e) => QueueState::Failed(e.clone()),
            None if s.done == s.enqueued => QueueState::Idle,
            None => QueueState::Busy,
        }
    }

    /// Starts recording instead of enqueueing (see `capture`); an error if it already
    /// records.
    pub fn begin_capture(&self) -> Result<()> {
        let mut s = self.q.lock();
        if s.capture.is_some() {
            return Err(Error::Config("the stream is capturing already (captures do not nest)".into()));
        }
        s.capture = Some(vec![]);
        Ok(())
    }

    /// Stops recording; what was recorded.
    pub fn end_capture(&self) -> Vec<Captured> {
        self.q.lock().capture.take().unwrap_or_default()
    }

    /// Records `item()` if the stream is capturing (true), else does nothing (false).
    pub fn capture(&self, item: impl FnOnce() -> Captured) -> bool {
        match &mut self.q.lock().capture {
            Some(v) => {
                v.push(item());
                true
            }
            None => false,
        }
    }

    pub fn is_capturing(&self) -> bool {
        self.q.lock().capture.is_some()
    }
}

impl Drop for CpuStream {
    fn drop(&mut self) {
        // Dropping a stream waits for its work, as a CUDA stream of this API does;
        // except on a stream's own thread (a callback that owned the handle), where
        // waiting could be waiting for itself: there the thread is left to finish the
        // queue and exit on its own.
        let inside = on_stream_thread();
        if !inside {
            self.q.wait_done();
        }
        let thread = {
            let mut s = self.q.lock();
            s.closing = true;
            if s.thread.is_none() {
                s.exited = true;
            }
            self.q.work.notify_all();
            s.thread.take()
        };
        if let (Some(h), false) = (thread, inside) {
            let _ = h.join();
        }
    }
}
