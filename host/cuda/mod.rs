//! The CUDA layer, in cudarc's style: [`driver`] turns raw results into [`crate::Error`],
//! [`memory`], [`stream`] and [`module`] own driver resources with RAII, and
//! [`backend`] is the persistent runtime's device side on top of them. The driver is
//! loaded at run time (cudarc's `dynamic-loading`), so a binary built here starts on a
//! machine without CUDA and reports `Error::NoDriver` instead of failing to load.

pub(crate) mod arena;
pub(crate) mod backend;
pub mod driver;
pub mod event;
pub mod graph;
pub(crate) mod green;
pub mod launch;
pub(crate) mod memops;
pub mod memory;
pub mod module;
pub(crate) mod nt_store;
pub(crate) mod peer;
pub(crate) mod relay;
pub(crate) mod resident_kernels;
pub mod stream;
