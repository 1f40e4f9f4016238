//! The CUDA backend: the persistent kernel and its relay on a device, the queue memory
//! they read, and peer links between devices, on top of the driver layer
//! (`crate::driver`).

pub(crate) mod backend;
pub(crate) mod nt_store;
pub(crate) mod peer;
pub(crate) mod relay;
