//! The stream API's CPU device ([`crate::stream::Device::cpu`]): what a stream, an event,
//! a kernel launch and a captured graph are without a GPU, so that code written
//! against `resident::stream` runs, and is tested, on any machine (as NVIDIA Warp's CPU
//! device lets its kernels run).
//!
//! Owns: the CPU stream (`queue`: one thread running a queue of operations in order),
//! what a capture records (`capture`), event records (`mark`), kernel launches
//! (`launch`), an image's kernels compiled for the host (`module`), and how each stream
//! operation is queued or captured (`ops`, methods of the CPU stream). Does not own: the
//! public types (`host/stream/*.rs`, which switch between this and `crate::driver`
//! through `super::raw`), the cross-stream order of device memory (`super::tracker`,
//! shared by both backends), nor what refuses once-only operations during a capture
//! (`super::capture_gate`, shared too).
//!
//! The model, in short (docs/streams.md has it in full):
//! - device memory and pinned memory are host memory; "device" addresses are host
//!   addresses, which is what kernels compiled for the host dereference;
//! - a stream is a thread; an event record completes when that thread reaches it;
//!   waits block the waiting stream's thread; priorities are recorded, not applied;
//! - a kernel block is one thread with a warp of one lane; an ordinary launch runs its
//!   blocks one after another on the stream's thread, a cooperative one runs every
//!   block on its own thread at once;
//! - a failing operation (a kernel that traps) fails its stream for good, as a CUDA
//!   error fails the context.

mod capture;
mod launch;
mod mark;
mod module;
mod ops;
mod queue;

pub(crate) use capture::Captured;
pub(crate) use launch::{CpuLaunch, MAX_COOPERATIVE_BLOCKS};
pub(crate) use mark::CpuEvent;
pub(crate) use module::{CpuKernel, CpuModule};
pub(crate) use queue::{CpuStream, Op, QueueState, refuse_blocking};
