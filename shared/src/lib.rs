//! Types shared by the host runtime and the device code of `resident`.
//!
//! Everything here is `#[repr(C)]` and `bytemuck::Pod`, so that the host can copy it
//! into device memory byte for byte and the device reads it unchanged. Layouts are
//! pinned by `const` assertions next to each type; a change that moves a field fails
//! to compile on both targets at once.
//!
//! This crate owns layouts and codes only: no atomics, no protocol logic. The queue
//! protocol that uses these layouts lives in `device/src/queue.rs` (device side) and
//! `host/queue/` (host side); docs/architecture.md describes both.
#![no_std]
#![warn(missing_docs)]

mod buffer;
pub mod builtin;
mod completion;
mod counter;
mod declare;
mod inline;
pub mod link;
pub mod lists;
mod params;
mod queue;
pub mod relay;
pub mod segment;
mod sources;
pub mod spawn;
mod status;
pub mod steps;
mod task;

pub use buffer::{BufSlice, BufferEntry, BufferHandle, ElemType, Element, MAX_BUFFERS, Slice};
pub use completion::{Completion, spent_stamp, stamp_for};
pub use counter::{COUNTER_TABLE_WORDS, CounterId, DROPPED, MAX_COUNTERS};
pub use declare::{Access, AccessMode, ArgError, COLLECTED, Collected, Declare, Grant, grants};
pub use inline::{from_inline_result, inline_result};
pub use params::{KernelParams, OneTaskParams, TableParams, worker_flags};
pub use queue::{CachePadded, QueueHeader, seq_before};
pub use segment::{SegmentCount, SegmentDone};
pub use sources::SOURCES;
pub use status::Status;
pub use task::{COMPACT_ARGS, CompactTask, MAX_LIST_CHUNK, TASK_ARG_BYTES, TASK_ARGS, Task, TaskId, task_flags, type_tag};
