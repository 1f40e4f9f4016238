//! Synchronization primitives through one door, as tokio's `loom` module: std's, or
//! loom's under `--cfg loom`, so that the loom models (the `loom_*` tests of this crate,
//! run with `RUSTFLAGS="--cfg loom"`) explore the shipped code, not a copy of it. What
//! loom cannot model (queue memory shared with workers through raw pointers, the
//! backends) uses std directly; the parts that go through here are host-only: the
//! publisher, the lifecycle, the completion tracker's ticket list and the tickets'
//! states.

#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, atomic};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, atomic};

#[cfg(loom)]
pub(crate) use loom::sync::MutexGuard;
#[cfg(loom)]
pub(crate) use loom::thread;
#[cfg(not(loom))]
pub(crate) use std::sync::MutexGuard;
#[cfg(not(loom))]
pub(crate) use std::thread;

/// One turn of a wait for another thread: spins first, then yields, then sleeps
/// (50 µs). Under loom, a yield, so that the model runs the other threads.
pub(crate) fn back_off(turns: &mut u32) {
    *turns = turns.saturating_add(1);
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    match *turns {
        0..64 => std::hint::spin_loop(),
        64..1024 => std::thread::yield_now(),
        _ => std::thread::sleep(std::time::Duration::from_micros(50)),
    }
}
