//! The per-stream lock that makes "refused while the stream captures" true, on both
//! devices: [`Stream::capture`](super::Stream::capture) holds it exclusively for the
//! whole capture, and the operations that must run exactly once (host callbacks,
//! pinned copies, ticket waits on the CPU) hold it shared from their capture check to
//! their enqueue. Checking and enqueueing apart, another thread could begin capturing
//! the same stream in between (a `ScopedStream` is `Sync`, an adopted stream is shared),
//! and the once-only operation would land in a graph replayable after its scope: a DMA
//! into freed pinned memory, a callback's box freed twice. (On a GPU a stream can also
//! join another stream's capture by waiting for an event recorded there; that is kept
//! out by the CUDA stream's own lock, `crate::driver::stream::Stream::enqueue_uncaptured`.)
//!
//! A once-only operation never waits for a capture: while one runs, or waits to start,
//! it is refused (a typed `Error::Config`), as before. A capture waits for the
//! operations inside the gate (a few microseconds: a check and an enqueue) and for a
//! scope's synchronization of the stream (see [`CaptureGate::settle`]); refusing new
//! once-only operations meanwhile is what keeps threads that enqueue callbacks without
//! pause from starving it. Launches, device copies, events and waits may be captured
//! and take no part in this: their hot path costs nothing more.
//!
//! An `RwLock` in all but name (capture: write; once-only: `try_read`), built on a
//! mutex so that it knows which thread captures: a thread that captures the stream
//! already is told so (captures do not nest), where a lock would wait for itself.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;

use crate::{Error, Result};

std::thread_local! {
    /// How many captures (of any stream) the calling thread is inside.
    static CAPTURES_HERE: Cell<u32> = const { Cell::new(0) };
}

/// Whether the calling thread is inside a [`Stream::capture`](super::Stream::capture)
/// (of any stream).
pub(crate) fn this_thread_captures() -> bool {
    CAPTURES_HERE.with(|c| c.get() > 0)
}

#[derive(Debug, Default)]
struct State {
    /// The thread running `Stream::capture` on this stream, if any.
    capturer: Option<ThreadId>,
    /// Once-only operations between their check and their enqueue, and scopes
    /// synchronizing the stream.
    holders: usize,
    /// Captures waiting for the holders to leave.
    waiting: usize,
}

/// See the module doc.
#[derive(Debug, Default)]
pub(crate) struct CaptureGate {
    state: Mutex<State>,
    /// Signalled when a capture ends or the last holder leaves.
    changed: Condvar,
}

/// The gate held by a capture; released on drop (also when the capture unwinds). Not
/// `Send`: it counts in its thread's `CAPTURES_HERE`.
pub(crate) struct Capturing<'a>(&'a CaptureGate, PhantomData<*const ()>);

/// The gate held shared; released on drop.
pub(crate) struct Held<'a>(&'a CaptureGate);

impl CaptureGate {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding it; a poisoned lock still holds valid counts.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the gate for a capture: waits until no other thread captures the stream and
    /// no operation holds the gate. An error if this thread captures the stream already.
    pub fn capture(&self) -> Result<Capturing<'_>> {
        let me = std::thread::current().id();
        let mut s = self.lock();
        if s.capturer == Some(me) {
            return Err(Error::Config("the stream is capturing already (captures do not nest)".into()));
        }
        s.waiting += 1;
        while s.capturer.is_some() || s.holders > 0 {
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.waiting -= 1;
        s.capturer = Some(me);
        CAPTURES_HERE.with(|c| c.set(c.get() + 1));
        Ok(Capturing(self, PhantomData))
    }

    /// Holds the gate for an operation that must not be captured (`what`, for the
    /// error): refused at once while a capture runs or waits to start.
    pub fn once(&self, what: &str) -> Result<Held<'_>> {
        let mut s = self.lock();
        if s.capturer.is_some() || s.waiting > 0 {
            return Err(Error::Config(format!("{what} cannot be captured into a graph, and the stream is capturing")));
        }
        s.holders += 1;
        Ok(Held(self))
    }

    /// Holds the gate while a scope synchronizes the stream: waits for a capture of the
    /// stream by another thread to end, and keeps a new one from starting meanwhile (on
    /// a GPU a synchronize of a capturing stream fails at once, without waiting). An
    /// error if this thread captures the stream (a scope is refused inside a capture, so
    /// a scope never meets it).
    pub fn settle(&self) -> Result<Held<'_>> {
        let me = std::thread::current().id();
        let mut s = self.lock();
        while let Some(t) = s.capturer {
            if t == me {
                return Err(Error::Config("a scope cannot synchronize a stream its own thread is capturing".into()));
            }
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.holders += 1;
        Ok(Held(self))
    }
}

impl Drop for Capturing<'_> {
    fn drop(&mut self) {
        self.0.lock().capturer = None;
        CAPTURES_HERE.with(|c| c.set(c.get() - 1));
        self.0.changed.notify_all();
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.holders -= 1;
        if s.holders == 0 {
            self.0.changed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn once_is_refused_only_while_a_capture_runs() {
        let g = CaptureGate::default();
        let held = g.once("x").unwrap();
        drop(held);
        let c = g.capture().unwrap();
        assert!(this_thread_captures());
        assert!(matches!(g.once("x"), Err(Error::Config(_))));
        assert!(matches!(g.capture(), Err(Error::Config(_))), "captures do not nest");
        assert!(matches!(g.settle(), Err(Error::Config(_))));
        drop(c);
        assert!(!this_thread_captures());
        drop(g.once("x").unwrap());
    }

    #[test]
    fn a_capture_waits_for_holders_and_a_settle_for_the_capture() {
        let g = Arc::new(CaptureGate::default());
        let held = g.once("x").unwrap();
        let g2 = g.clone();
        let t = std::thread::spawn(move || {
            let _c = g2.capture().unwrap();
            std::thread::sleep(Duration::from_millis(50));
        });
        std::thread::sleep(Duration::from_millis(20));
        assert!(matches!(g.once("y"), Err(Error::Config(_))), "a waiting capture is not starved by new holders");
        drop(held);
        // The capture runs now (or soon); a settle waits for it to end, or runs first.
        let s = g.settle().unwrap();
        assert!(g.lock().capturer.is_none());
        drop(s);
        t.join().unwrap();
    }
}
