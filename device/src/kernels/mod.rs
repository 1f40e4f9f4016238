//! Ordinary (non-persistent) kernels for the stream API (`resident::stream`): each is
//! launched once per piece of work, like any CUDA kernel, on a user's stream.
//!
//! Owns: the kernels' parameter layouts and their bodies, written as plain functions of
//! a thread's index and the grid's stride so that the host compiles and tests the same
//! code (`device/ptx/lib.rs` holds the thin `extern "ptx-kernel"` shells).
//! Does not own: anything of the persistent queue (see `worker`, `tasks`).

pub mod axpy_flat;
pub mod pipeline;
pub mod spin_write;
pub mod tree_level;
pub mod wait_ticket;
