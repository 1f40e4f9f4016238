//! The CPU backend: worker threads run `resident_device::worker::persistent_loop`, the
//! very loop the GPU runs, with a warp of one lane, over queue memory in host RAM.
//! "Publishing" is a release store of `tail`, the same counter the GPU's copy engine
//! writes; so the protocol tested here in CI is the one the GPU runs.

mod backend;
mod memory;

pub(crate) use backend::CpuBackend;
pub(crate) use memory::HostAlloc;
