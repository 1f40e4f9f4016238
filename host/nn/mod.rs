//! The fused-op examples (issue 4) as library pieces the examples, tests and users
//! share: fused conv + batch norm on the persistent queue ([`conv_bn`]) and its unfused
//! baselines ([`conv_bn_stages`]), the record pipeline ([`records`]), the persistent
//! RNN with its per-step baselines ([`rnn`]), and f64 references ([`reference`]).
//!
//! The queue tasks here (opcodes 16..=31) run only on the `Nn` kernel flavor
//! (`RuntimeConfig::nn`); the RNN is a kernel of its own (docs/examples.md says why).
//! Device code: `resident_device::nn`; argument layouts: `resident_shared::nn`.

pub mod conv_bn;
pub mod conv_bn_stages;
pub mod records;
pub mod reference;
pub mod rnn;

pub use resident_shared::nn::ConvGeom;
