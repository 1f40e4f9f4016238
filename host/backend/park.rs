//! A backend's state for elastic residency (`crate::runtime::residency`): running,
//! parking or parked, and the exit both backends take.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::{Error, Result};

/// A backend's state for elastic residency, with a generation bumped at every change:
/// a health poll that sees the kernel (or the worker pool) gone can tell an exit it
/// raced with (the generation moved) from a dead runtime.
pub(crate) struct ParkState {
    /// `generation << 2 | state`.
    word: AtomicU64,
}

/// How long an exit (or the stop after a failed relaunch) waits for the workers.
pub(crate) const EXIT_WAIT: Duration = Duration::from_secs(5);

/// Workers run (or may: no exit under way).
pub(crate) const RUNNING: u64 = 0;
/// An exit is under way: the workers are told to leave.
pub(crate) const PARKING: u64 = 1;
/// The workers left an idle queue; the next reservation starts them again.
pub(crate) const PARKED: u64 = 2;

impl ParkState {
    pub fn new() -> Self {
        Self { word: AtomicU64::new(RUNNING) }
    }

    /// The state now.
    pub fn get(&self) -> u64 {
        self.word.load(Ordering::SeqCst) & 3
    }

    /// Moves to `state`, with a new generation. SeqCst, as the loads in `dead`: a poll
    /// whose two loads see one generation saw no change between them.
    // (`fetch_update` is deprecated on the nightly that Miri runs, as `try_update`,
    // which the pinned stable toolchain does not have yet.)
    #[allow(deprecated)]
    pub fn set(&self, state: u64) {
        let _ = self.word.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |w| Some(((w >> 2) + 1) << 2 | state));
    }

    /// The exit (docs/protocol.md, E2-E4), the same on both backends: `PARKING` before
    /// the abort (so a health poll racing it is no fault), the abort, the wait for the
    /// workers, then the backend's reset of the queue with no worker running, `PARKED`.
    /// False if an exit is already under way or done. Every task has completed (the
    /// caller's check), so the workers only poll and leave within microseconds; one
    /// that does not within [`EXIT_WAIT`] is a broken runtime (`Timeout`, recorded as
    /// the fault by the caller).
    pub fn park(
        &self,
        abort: impl FnOnce() -> Result<()>,
        wait_exit: impl FnOnce(Duration) -> bool,
        reset: impl FnOnce() -> Result<()>,
    ) -> Result<bool> {
        if self.get() != RUNNING {
            return Ok(false);
        }
        self.set(PARKING);
        abort()?;
        if !wait_exit(EXIT_WAIT) {
            return Err(Error::Timeout);
        }
        reset()?;
        self.set(PARKED);
        Ok(true)
    }

    /// Whether `gone` (a query of the workers, made between two loads of the state)
    /// means a dead runtime: they are gone, the state was `RUNNING` and nothing
    /// changed meanwhile. Workers gone by an exit, or an exit or relaunch that raced
    /// the query, are no fault.
    pub fn dead(&self, gone: impl FnOnce() -> bool) -> bool {
        let before = self.word.load(Ordering::SeqCst);
        if before & 3 != RUNNING {
            return false;
        }
        let gone = gone();
        gone && self.word.load(Ordering::SeqCst) == before
    }
}
