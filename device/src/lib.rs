//! Device code of `resident`: everything that runs on the GPU.
//!
//! The same sources compile for two targets. For `nvptx64-nvidia-cuda` (through
//! `device/ptx`, built by `host/build.rs`) they become the persistent kernel; for the
//! host they are the CPU backend's workers, which run the identical loop and task code
//! with a "warp" of one lane. Only [`arch`] differs between the two.
//!
//! Owns: the arch layer, the queue's consumer side ([`queue`]), completion counting
//! ([`completion`]), device-side dependencies ([`deps`]), the persistent loop
//! ([`worker`]), buffer checks ([`buffers`]) and the built-in tasks ([`tasks`]).
//! Does not own: layouts (in `resident-shared`) or anything the host does.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch, link_llvm_intrinsics, stdarch_nvptx))]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod arch;
pub mod buffers;
pub mod completion;
pub mod deps;
pub mod kernels;
pub mod lists;
pub mod nn;
pub mod queue;
#[cfg(target_arch = "nvptx64")]
pub mod relay;
pub mod spawn;
pub mod tasks;
pub mod worker;

pub use resident_shared as shared;
