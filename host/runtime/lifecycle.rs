//! The runtime's life, as one state machine that the other parts are handed:
//!
//! ```text
//!   Running ──close──▶ Closing ──drain done / abort──▶ Stopped
//!      │                  │
//!      └──fault──▶ (Running or Closing, with a fault recorded: every later call fails)
//! ```
//!
//! - **Running**: producers reserve and publish; waiters poll.
//! - **Closing**: one thread (the first to call `close`, `shutdown` or drop) drains:
//!   the sentinel after everything queued, then an abort if the drain overruns
//!   (host/runtime/shutdown.rs). New submissions fail with `ShutDown`. Every other thread that
//!   asks to close meanwhile waits for that drain and gets its outcome.
//! - **Stopped**: the workers left (or never will: `leak`), every ticket is resolved.
//!   A later `close` returns the same outcome at once.
//!
//! A fault (a device fault, a hung task, an exited kernel) is recorded beside the phase
//! and sticks: every later operation reports it. `aborted` says that the workers were
//! told to leave (by shutdown past its deadline, or by the watchdog).
//!
//! What it does not own: the drain itself (host/runtime/shutdown.rs), the reservation gate
//! (`Producer::closed`, under the producer lock, so that the sentinel is reserved after
//! every batch that got in), the tickets (the completion tracker).

use crate::util::sync::atomic::{AtomicBool, Ordering};
use crate::util::sync::{Condvar, Mutex};

use crate::{Error, Result};

/// Who asked to close: the thread that drains, or one that waits for its outcome.
pub(crate) enum CloseTurn {
    /// This caller drains, then calls [`Lifecycle::finish`].
    Drain,
    /// Another thread drains (or drained): this is its outcome, once it is known.
    Done(Result<()>),
}

#[derive(Default)]
pub(crate) struct Lifecycle {
    /// Shutdown has begun: an exited kernel is then no fault. A flag for the hot paths
    /// (health polls); the phase itself is `phase`.
    closing: AtomicBool,
    /// The workers were told to abort: producers waiting for ring space give up.
    aborted: AtomicBool,
    /// The drain ended: every ticket is resolved, the workers left (or `leak`).
    stopped: AtomicBool,
    /// Workers may still run (they did not leave after the abort): their memory must
    /// never be freed.
    leak: AtomicBool,
    /// The first fault; sticks.
    fault: Mutex<Option<Error>>,
    /// A fault is recorded (set under `fault`'s lock, after it): the check every
    /// submission and poll makes reads this flag, a cache line nobody writes while the
    /// runtime is healthy, and takes the lock only to clone a recorded fault. With the
    /// lock every time, four producers passed its line around twice a batch (`pre`:
    /// 0.52 µs a batch against 0.23 for one producer, measured with the `phase-timing`
    /// build).
    faulted: AtomicBool,
    phase: Mutex<Phase>,
    ended: Condvar,
}

#[derive(Default)]
enum Phase {
    #[default]
    Running,
    Closing,
    Stopped(Result<()>),
}

impl Lifecycle {
    /// The recorded fault, if any.
    pub fn fault(&self) -> Result<()> {
        // SeqCst, with the store in `record_fault`: a reader ordered after the record
        // (by any means) sees it, as it would through the lock; one not ordered after it
        // may miss it, as it could have taken the lock just before.
        if !self.faulted.load(Ordering::SeqCst) {
            return Ok(());
        }
        match &*self.fault.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Records `e` as the fault unless one is recorded already; returns the fault that
    /// stands and whether it is `e` (the first).
    pub fn record_fault(&self, e: Error) -> (Error, bool) {
        let mut f = self.fault.lock().unwrap_or_else(|e| e.into_inner());
        let first = f.is_none();
        let e = f.get_or_insert(e).clone();
        // After the fault is in place (a reader that sees the flag finds it), before
        // the lock is released (and before the caller resolves any ticket with it).
        self.faulted.store(true, Ordering::SeqCst);
        (e, first)
    }

    /// Asks to close. The first caller gets [`CloseTurn::Drain`] and must call
    /// [`Lifecycle::finish`]; every other caller waits until it has, and gets its
    /// outcome (at once if the runtime stopped already).
    pub fn begin_close(&self) -> CloseTurn {
        let mut phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        match &*phase {
            Phase::Running => {
                *phase = Phase::Closing;
                // Release: pairs with the Acquire in `is_closing` (a flag; the phase is
                // under the lock).
                self.closing.store(true, Ordering::Release);
                CloseTurn::Drain
            }
            Phase::Closing => loop {
                phase = self.ended.wait(phase).unwrap_or_else(|e| e.into_inner());
                if let Phase::Stopped(r) = &*phase {
                    return CloseTurn::Done(r.clone());
                }
            },
            Phase::Stopped(r) => CloseTurn::Done(r.clone()),
        }
    }

    /// The drain ended with `outcome`: the runtime is stopped, and every thread waiting
    /// in [`Lifecycle::begin_close`] returns it.
    pub fn finish(&self, outcome: Result<()>, leaked: bool) {
        if leaked {
            self.leak.store(true, Ordering::Release);
        }
        // Release: pairs with the Acquire in `is_stopped`.
        self.stopped.store(true, Ordering::Release);
        *self.phase.lock().unwrap_or_else(|e| e.into_inner()) = Phase::Stopped(outcome);
        self.ended.notify_all();
    }

    /// Shutdown has begun (or ended).
    pub fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    /// The drain ended (see [`Lifecycle::finish`]).
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// Workers that would not leave keep their memory (see [`Lifecycle::finish`]).
    pub fn leaked(&self) -> bool {
        self.leak.load(Ordering::Acquire)
    }

    /// Marks the workers told to abort (see [`Lifecycle::is_aborted`]).
    pub fn set_aborted(&self) {
        // Release: pairs with the Acquire in `is_aborted`, polled by producers waiting
        // for ring space (a flag; the workers' own signal is `abort` in the queue header).
        self.aborted.store(true, Ordering::Release);
    }

    /// The workers were told to leave: nothing published now would run.
    pub fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// The first fault sticks and every later check reports it, from any thread; none
    /// is reported before one is recorded.
    #[test]
    fn the_first_fault_sticks() {
        let life = Lifecycle::default();
        assert_eq!(life.fault(), Ok(()));
        assert_eq!(life.record_fault(Error::Timeout), (Error::Timeout, true));
        assert_eq!(life.record_fault(Error::ShutDown), (Error::Timeout, false));
        assert_eq!(life.fault(), Err(Error::Timeout));
        std::thread::scope(|s| s.spawn(|| assert_eq!(life.fault(), Err(Error::Timeout))).join().unwrap());
    }

    /// Closers racing: one drains, the others return only once it has finished, with
    /// its outcome; a later one gets it at once.
    #[test]
    fn every_closer_gets_the_drains_outcome() {
        let life = Arc::new(Lifecycle::default());
        let drained = Arc::new(AtomicBool::new(false));
        let outcomes: Vec<Result<()>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    let (life, drained) = (life.clone(), drained.clone());
                    s.spawn(move || match life.begin_close() {
                        CloseTurn::Drain => {
                            std::thread::sleep(std::time::Duration::from_millis(50));
                            drained.store(true, Ordering::SeqCst);
                            life.finish(Err(Error::Timeout), false);
                            Err(Error::Timeout)
                        }
                        CloseTurn::Done(r) => {
                            assert!(drained.load(Ordering::SeqCst), "returned before the drain ended");
                            r
                        }
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(outcomes.iter().all(|o| *o == Err(Error::Timeout)), "{outcomes:?}");
        assert!(matches!(life.begin_close(), CloseTurn::Done(Err(Error::Timeout))));
        assert!(life.is_stopped() && life.is_closing());
    }
}

/// loom: two closers; one drains and writes the drain's result, the other returns only
/// after it and reads it (loom flags the read if nothing orders it after the write).
#[cfg(all(test, loom))]
mod loom_lifecycle {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    #[test]
    fn loom_a_second_closer_sees_the_drain() {
        loom::model(|| {
            let life = Arc::new(Lifecycle::default());
            let drained = Arc::new(UnsafeCell::new(false));
            let close = |life: &Lifecycle, drained: &UnsafeCell<bool>| match life.begin_close() {
                CloseTurn::Drain => {
                    drained.with_mut(|d| unsafe { *d = true });
                    life.finish(Ok(()), false);
                }
                CloseTurn::Done(r) => {
                    assert_eq!(r, Ok(()));
                    assert!(drained.with(|d| unsafe { *d }), "returned before the drain ended");
                }
            };
            let h = {
                let (life, drained) = (life.clone(), drained.clone());
                loom::thread::spawn(move || close(&life, &drained))
            };
            close(&life, &drained);
            h.join().unwrap();
            assert!(life.is_stopped());
        });
    }
}
