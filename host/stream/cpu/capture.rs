//! What a CPU stream records while it captures ([`Captured`]), and the buffer it records
//! into ([`CaptureBuffer`]): `Stream::capture` fills it, `Graph::launch` replays what it
//! held (`ops`).
//!
//! What a capture records, and what it refuses:
//! - launches (the kernel, the grid and the parameter bytes, copied at capture), device
//!   copies and the built-in kernels (with their buffers, which the graph keeps alive;
//!   each replay goes through the access tracker again, so a replay is ordered with
//!   other streams' uses of those buffers like a fresh call), event records, and waits
//!   for events and streams (resolved at each replay, as a wait is when it is called);
//! - not: host callbacks (a `FnOnce` runs once), copies to and from pinned memory (the
//!   memory is lent only until the scope ends; a graph may outlive it), ticket waits (a
//!   ticket's tasks complete once): these return `Error::Config` while the stream
//!   captures, refused by the stream's capture gate (`super::super::capture_gate`),
//!   which also keeps a capture from starting between their check and their enqueue.
//!
//! The buffer is apart from the queue's lock: an operation of another thread that
//! finds the stream not capturing and is enqueued while a capture begins runs as if it
//! had been called before the capture (it is not recorded), as on a GPU.

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use super::mark::CpuEvent;
use super::queue::Queue;
use crate::stream::device_memory::DeviceMem;
use crate::{Error, Result};

/// A replayable body: a launch, a copy, a built-in kernel.
pub(crate) type Body = Arc<dyn Fn() -> Result<()> + Send + Sync>;

/// One device range a captured operation touches, owned by the graph.
pub(crate) struct OwnedUse {
    pub mem: Arc<DeviceMem>,
    pub bytes: Range<usize>,
    pub write: bool,
}

/// One recorded operation.
pub(crate) enum Captured {
    Launch(Body),
    Tracked { uses: Vec<OwnedUse>, body: Body },
    Record(Arc<CpuEvent>),
    WaitEvent(Arc<CpuEvent>),
    WaitStream(Arc<Queue>),
}

/// While the stream captures, what it recorded so far.
#[derive(Default)]
pub(crate) struct CaptureBuffer {
    items: Mutex<Option<Vec<Captured>>>,
}

impl CaptureBuffer {
    fn lock(&self) -> MutexGuard<'_, Option<Vec<Captured>>> {
        // Nothing panics while holding it (an item is a few cloned handles); a poisoned
        // lock still holds a valid list.
        self.items.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` with the stream recording instead of enqueueing; what it recorded. The
    /// recording stops whatever `f` does (an error, a panic), or the stream would go on
    /// recording instead of running.
    pub fn record_during(&self, f: impl FnOnce() -> Result<()>) -> Result<Vec<Captured>> {
        {
            let mut items = self.lock();
            if items.is_some() {
                return Err(Error::Config("the stream is capturing already (captures do not nest)".into()));
            }
            *items = Some(vec![]);
        }
        struct End<'a>(&'a CaptureBuffer);
        impl Drop for End<'_> {
            fn drop(&mut self) {
                // Stops recording; what was recorded is a graph nobody gets.
                let items = self.0.lock().take();
                drop(items);
            }
        }
        let end = End(self);
        f()?;
        std::mem::forget(end);
        Ok(self.lock().take().unwrap_or_default())
    }

    /// Records `item()` if the stream is capturing (true), else does nothing (false).
    pub fn record(&self, item: impl FnOnce() -> Captured) -> bool {
        match &mut *self.lock() {
            Some(v) => {
                v.push(item());
                true
            }
            None => false,
        }
    }
}
