//! What an event is on the CPU: a [`Mark`] is one record of an event into a CPU stream,
//! completed (with the instant) when the stream's thread reaches it; a [`CpuEvent`] is
//! the user's event, which is its latest mark. Waits resolve the latest mark when they
//! are enqueued (CUDA's `cuStreamWaitEvent` semantics), so a later record of the same
//! event never changes what an earlier wait waits for.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use crate::{Error, Result};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks; a poisoned one still holds valid data.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One record of an event: complete once the stream it was recorded into has run
/// everything enqueued before it.
#[derive(Debug, Default)]
pub(crate) struct Mark {
    /// When the stream reached it; `None` until then. Written once.
    at: Mutex<Option<Instant>>,
    reached: Condvar,
}

impl Mark {
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// The stream reached this mark. Idempotent: the first instant stays.
    ///
    /// This is what publishes the recording stream's work to whoever waits for the mark:
    /// the stream's thread calls it after running every operation enqueued before the
    /// record, and writes the instant under `at`'s mutex; a waiting stream's thread
    /// ([`Mark::wait`]) or the host ([`Mark::is_complete`]) sees it under the same mutex,
    /// so the unlock here happens-before their lock, and the operations' memory writes
    /// (a memcpy, a kernel's stores) happen-before whatever the waiter runs next. The
    /// SAFETY of the CPU copies and kernels (`copy.rs`, `kernels.rs`) rests on it: the
    /// tracker's waits are waits for marks.
    pub fn complete(&self) {
        lock(&self.at).get_or_insert_with(Instant::now);
        self.reached.notify_all();
    }

    pub fn instant(&self) -> Option<Instant> {
        *lock(&self.at)
    }

    pub fn is_complete(&self) -> bool {
        self.instant().is_some()
    }

    /// Blocks until the mark is complete.
    pub fn wait(&self) {
        let mut at = lock(&self.at);
        while at.is_none() {
            at = self.reached.wait(at).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// A user's event on the CPU device: the mark of its latest record, if any.
#[derive(Debug, Default)]
pub(crate) struct CpuEvent {
    latest: Mutex<Option<Arc<Mark>>>,
}

impl CpuEvent {
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// The mark of the latest record (`None`: never recorded).
    pub fn latest(&self) -> Option<Arc<Mark>> {
        lock(&self.latest).clone()
    }

    /// A new record: from now on the event means `mark`.
    pub fn set(&self, mark: Arc<Mark>) {
        *lock(&self.latest) = Some(mark);
    }

    /// Whether the latest record has been reached (true if never recorded, as CUDA).
    pub fn is_complete(&self) -> bool {
        self.latest().is_none_or(|m| m.is_complete())
    }

    /// Blocks until the latest record (as of this call) has been reached.
    pub fn synchronize(&self) {
        if let Some(m) = self.latest() {
            m.wait();
        }
    }

    /// Milliseconds from `start`'s latest record to this one's; both must be complete.
    pub fn elapsed_ms_since(&self, start: &CpuEvent) -> Result<f32> {
        let at = |e: &CpuEvent| e.latest().and_then(|m| m.instant());
        match (at(start), at(self)) {
            (Some(s), Some(e)) => Ok(if e >= s { (e - s).as_secs_f64() * 1e3 } else { -((s - e).as_secs_f64() * 1e3) } as f32),
            _ => Err(Error::Config("elapsed time between events: both must be recorded and complete".into())),
        }
    }
}
