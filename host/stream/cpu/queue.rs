//! A CPU stream: a queue of operations and the one thread that runs them, in order.
//!
//! Owns: the queue, its thread (started at the first operation, so a stream that is
//! never used costs no thread), the count of operations enqueued and run (what
//! `synchronize` and `is_idle` compare), and the sticky failure. Does not own: what an
//! operation does (closures built by `ops`), what a capture records (`capture`), nor
//! the cross-stream order of device memory (the tracker enqueues [`Op::Wait`]s for it).
//!
//! Failure is sticky, as a CUDA context's: after an operation fails (returns an error
//! or panics) the thread skips every later closure and wait, and `synchronize` reports
//! the error ever after. Records still complete, so that no other stream waiting on
//! this one waits forever; and every operation is still counted as run only once the
//! thread is past it, so `synchronize` never returns while one may still touch memory.
//!
//! The thread never dies of user code: an operation runs under `catch_unwind`, a
//! skipped one is dropped under it (what it captured may panic in `Drop`), and a panic's
//! payload is disposed of without letting its own `Drop` unwind (`super::super::caught`).
//! Should the thread unwind all the same, a guard fails the stream, marks it exited,
//! completes the records still queued and wakes every waiter: nothing waits forever.
//!
//! Blocking calls of the stream API (`synchronize`, `Event::synchronize`, `to_vec`, a
//! scope...) are refused on the threads of CPU streams ([`refuse_blocking`]): a host
//! callback that waited for a stream could wait for work queued behind itself, and
//! never return.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::capture::CaptureBuffer;
use super::mark::Mark;
use crate::stream::caught;
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

impl Queue {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding it; a poisoned lock still holds valid counts.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `op`, starting the thread at the first one.
    pub fn submit(self: &Arc<Self>, op: Op) -> Result<()> {
        let mut s = self.lock();
        if s.exited {
            let failed = s.failed.clone();
            drop(s);
            // A captured graph can reach a stream whose handle is gone (with records and
            // waits only), and anyone a stream whose thread unwound: either runs nothing
            // more, so a record is reached now. A refused closure is dropped unrun, its
            // captures' `Drop` contained as on the thread.
            return match op {
                Op::Record(m) => {
                    m.complete();
                    Ok(())
                }
                Op::Wait(_) => Ok(()),
                Op::Run(f) => {
                    caught::drop_caught(f);
                    Err(failed.unwrap_or_else(|| Error::Config("an operation was enqueued on a CPU stream that is gone".into())))
                }
            };
        }
        if s.thread.is_none() && !s.closing {
            let q = self.clone();
            let h = std::thread::Builder::new()
                .name(self.name.clone())
                .spawn(move || {
                    // `work` does not unwind (see the module doc); if it did, its guard has
                    // already failed the stream, and the payload must not end the thread
                    // by panicking in its `Drop` (std would abort on it).
                    if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| q.work())) {
                        caught::discard(p);
                    }
                })
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
        let _unwinding = Unwinding(self);
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
                Op::Run(f) if !failed => caught::run_caught(f)
                    .unwrap_or_else(|msg| Err(Error::DeviceFault(format!("an operation panicked on a CPU stream: {msg}")))),
                Op::Run(f) => {
                    // Skipped: what the closure captured is dropped unrun, and its `Drop`
                    // may panic (the stream has failed already).
                    caught::drop_caught(f);
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
            // Counted under the lock, after the operation: a `synchronize` that sees the
            // count (under the same lock) sees the operation's memory writes.
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

/// Should `work` unwind (nothing in it is meant to), fails the stream and lets every
/// waiter go: the stream is marked failed and exited, the operations still queued are
/// counted as past (their records completed, their closures dropped unrun), and those
/// who wait for progress are woken.
struct Unwinding<'a>(&'a Queue);

impl Drop for Unwinding<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let q = self.0;
        let ops = {
            let mut s = q.lock();
            s.failed.get_or_insert_with(|| Error::DeviceFault(format!("the thread of CPU stream `{}` unwound", q.name)));
            s.exited = true;
            s.done = s.enqueued;
            std::mem::take(&mut s.ops)
        };
        q.progress.notify_all();
        for op in ops {
            match op {
                Op::Record(m) => m.complete(),
                // Unwinding already: a drop that panicked here would abort the process.
                other => {
                    caught::drop_caught(other);
                }
            }
        }
    }
}

/// A CPU stream: the handle that owns a [`Queue`] and closes it when dropped, and the
/// buffer its captures record into.
pub(crate) struct CpuStream {
    q: Arc<Queue>,
    capture: CaptureBuffer,
}

impl std::fmt::Debug for CpuStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuStream").field("name", &self.q.name).finish_non_exhaustive()
    }
}

impl CpuStream {
    pub fn new(name: String) -> Self {
        let q = Arc::new(Queue { state: Mutex::default(), work: Condvar::new(), progress: Condvar::new(), name });
        Self { q, capture: CaptureBuffer::default() }
    }

    pub fn queue(&self) -> &Arc<Queue> {
        &self.q
    }

    /// What this stream records while it captures.
    pub fn capture_buffer(&self) -> &CaptureBuffer {
        &self.capture
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
            // The thread's body catches everything: it ends without a payload.
            let _ = h.join();
        }
    }
}
