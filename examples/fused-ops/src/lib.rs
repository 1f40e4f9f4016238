//! resident's fused-op examples, as a library the example binaries and tests share,
//! written only against resident's public API: fused conv + batch norm on the
//! persistent queue ([`conv_bn`]) and its unfused baselines ([`conv_bn_stages`]), the
//! record pipeline ([`records`]), the persistent RNN with its per-step baselines
//! ([`rnn`]), f64 references ([`reference`]), and timing helpers ([`timing`]).
//!
//! The queue tasks and the kernels are the device crate's (`fused-ops-device`, in
//! `device/`), compiled into the kernel image `fused_ops` by this crate's build script
//! ([`kernel_image`]); a runtime that loads it ([`config`]) runs them beside the
//! built-in tasks. The RNN is a kernel of its own rather than queue tasks
//! (docs/examples.md says why), launched with the typed launch API.

pub mod conv_bn;
pub mod conv_bn_stages;
pub mod records;
pub mod reference;
pub mod rnn;
pub mod timing;

pub use fused_ops_device::layout::ConvGeom;

use resident::{BackendKind, KernelImage, RuntimeConfig};

/// The example's kernel image: the set `fused_ops_device::FusedOps` (the built-in tasks
/// plus the examples') in 128-thread blocks capped at 128 registers, and the ordinary
/// kernels (conv + BN stages, RNN).
pub fn kernel_image() -> KernelImage {
    resident::kernel_image!("fused_ops")
}

/// A runtime configuration that loads the example's image, on `backend`.
pub fn config(backend: BackendKind) -> RuntimeConfig {
    RuntimeConfig { backend, image: kernel_image(), ..RuntimeConfig::default() }
}

/// Whether the CUDA backend can run the example: a GPU, and PTX in its image.
pub fn cuda_available() -> bool {
    kernel_image().has_ptx() && resident::cuda_available()
}
