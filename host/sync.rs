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
