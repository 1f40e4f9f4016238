//! The CUDA driver, in cudarc's style: [`context`] turns raw results into
//! [`crate::Error`] and holds the context; [`memory`], [`stream`], [`event`], [`module`]
//! and [`graph`] own driver resources with RAII; [`launch`] launches kernels; green
//! contexts, memory operations, the arena and the process-wide registry of resident
//! kernels beside them. The CUDA backend and the stream API are built on these. The
//! driver is loaded at run time (cudarc's `dynamic-loading`), so a binary built here
//! starts on a machine without CUDA and reports `Error::NoDriver` instead of failing to
//! load.

pub(crate) mod arena;
pub mod context;
pub mod event;
pub mod graph;
pub(crate) mod green;
pub mod launch;
pub(crate) mod memops;
pub mod memory;
pub mod module;
pub(crate) mod resident_kernels;
pub mod stream;
