//! The per-task deadline (`RuntimeConfig::task_deadline`): a task that runs, or waits,
//! far longer than it should is a hung task, and a runtime that others embed must not
//! let it hold its callers forever.
//!
//! What is watched: the oldest unfinished work. The completion tracker notes when its
//! prefix of completed segments last moved, or when a ticket arrived at an empty queue
//! (`CompletionTracker::stalled`). If that is longer ago than the deadline, the runtime
//! aborts the workers (`abort`: waiting warps leave, `spin` and dependency waits end
//! with `Aborted`), records `Error::TaskHung` as its fault (every outstanding ticket and
//! every later call fails with it) and says so on stderr. The granularity is a segment
//! (at most 1024 tasks, run in parallel by all workers): the deadline must exceed the
//! time one segment's slowest task needs.
//!
//! Who watches: every waiter's health poll (`Shared::poll_health`, at most every
//! millisecond) and, while nobody waits, the notifier thread, which a runtime with a
//! deadline starts at once (`host/queue/notifier.rs`). So a hung task is caught within
//! about the deadline plus a quarter of it, even if no one ever waits.
//!
//! What cannot be done: a warp in a loop that never reads `abort` (or a CPU task that
//! never returns) cannot be preempted. The kernel then never exits; the runtime leaks
//! its queue memory rather than free it under running code (freeing pinned memory
//! while a kernel is resident would block forever), and says so. A new runtime in the
//! same process is refused on that device (`Error::DeviceFault`): the old kernel still
//! holds the SMs.

use std::time::Duration;

use crate::backend::Backend;
use crate::queue::completions::CompletionTracker;

/// The first unfinished task, if the oldest unfinished work has stalled past
/// `deadline`: the runtime then records `TaskHung` and aborts (`Shared::poll_health`).
pub(crate) fn stalled_past(tracker: &CompletionTracker, backend: &Backend, deadline: Duration) -> Option<u64> {
    tracker.advance(backend);
    match tracker.stalled() {
        Some((seq, stalled)) if stalled > deadline => Some(seq),
        _ => None,
    }
}
