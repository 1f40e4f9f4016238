//! resident's fused-op examples, as a library the example binaries and tests share,
//! written only against resident's public API: fused conv + batch norm on the
//! persistent queue ([`conv_bn`]) and its unfused baselines ([`conv_bn_stages`]), the
//! record pipeline ([`records`]), the persistent RNN with its per-step baselines
//! ([`rnn`]), f64 references ([`reference`]), and timing helpers ([`timing`]).
//!
//! The queue tasks and the kernels are the device crate's (`fused-ops-device`, in
//! `device/`), compiled by this crate's build script into two kernel images: `fused_ops`
//! ([`kernel_image`]; a runtime that loads it, [`config`], runs every example task
//! beside the built-in tasks; it also holds the RNN's kernels) and `conv_bn`
//! ([`conv_bn_image`], [`conv_bn_config`]: the conv tile and normalize alone, whose
//! persistent kernel spills far less, and the unfused stage kernels). The RNN is a
//! kernel of its own rather than queue tasks (docs/examples.md says why), launched with
//! the typed launch API.

pub mod conv_bn;
pub mod conv_bn_stages;
pub mod records;
pub mod reference;
pub mod rnn;
pub mod timing;

pub use fused_ops_device::layout::ConvGeom;

use resident::{BackendKind, KernelImage, RuntimeConfig};

/// The examples' kernel image: the set `fused_ops_device::FusedOps` (the built-in tasks
/// plus every example task) in 128-thread blocks capped at 128 registers, and the
/// persistent RNN's kernels.
pub fn kernel_image() -> KernelImage {
    resident::kernel_image!("fused_ops")
}

/// A runtime configuration that loads [`kernel_image`], on `backend`.
pub fn config(backend: BackendKind) -> RuntimeConfig {
    RuntimeConfig { backend, image: kernel_image(), ..RuntimeConfig::default() }
}

/// The conv + BN image: the set `fused_ops_device::ConvBn` (the conv tile and
/// batch-norm normalize, no other task) in 128-thread blocks capped at 128 registers,
/// and the unfused stage kernels ([`conv_bn_stages`]). Its persistent kernel needs 133
/// registers uncapped and spills 12 bytes capped, against 164 and 124 for
/// [`kernel_image`]'s, which carries the record stages and the built-in tasks too.
pub fn conv_bn_image() -> KernelImage {
    resident::kernel_image!("conv_bn")
}

/// A runtime configuration that loads [`conv_bn_image`] with three blocks per SM (the
/// register cap lets four fit; the conv tiles are compute-bound and gain from the
/// extra warps), on `backend`.
pub fn conv_bn_config(backend: BackendKind) -> RuntimeConfig {
    RuntimeConfig { backend, image: conv_bn_image(), max_blocks_per_sm: 3, ..RuntimeConfig::default() }
}

/// Whether the CUDA backend can run the examples: a GPU, and PTX in their images.
pub fn cuda_available() -> bool {
    kernel_image().has_ptx() && conv_bn_image().has_ptx() && resident::cuda_available()
}
