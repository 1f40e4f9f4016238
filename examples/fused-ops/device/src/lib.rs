//! The device code of resident's fused-op examples, a device crate like any user's: it
//! depends on `resident-device` alone, declares its task types with `DeviceTask` and
//! its set with `task_set!`, and is compiled to PTX by the example's build script
//! (`resident-build`) and for the host (the CPU backend, and the host's checks of each
//! task's declaration).
//!
//! Owns: the argument layouts ([`layout`]); the tasks of the set [`FusedOps`]: the conv
//! tile and batch-norm normalize ([`conv_bn_tasks`] over [`conv`] and [`bn`]) and the
//! record pipeline's stages ([`records`]); the ordinary kernels: the unfused conv + BN
//! stages ([`stages`]) and the persistent RNN, its feeder and its per-step baseline
//! ([`rnn`]); the arithmetic they share ([`math`]).
//! Does not own: the queue, completion or dependency protocol (the persistent loop runs
//! these tasks like any other).
#![no_std]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod bn;
pub mod conv;
pub mod conv_bn_tasks;
pub mod layout;
pub mod math;
pub mod records;
pub mod rnn;
pub mod stages;

use layout::{BnNormalize, ConvTile, RecordParse, RecordReduce, RecordTransform};
use resident_device::Builtins;

resident_device::task_set! {
    /// The built-in tasks plus the examples': the conv tile, batch-norm normalize, and
    /// the record pipeline's three stages (ids `0x100..=0x104`, [`layout::ids`]).
    pub struct FusedOps: Builtins { ConvTile, BnNormalize, RecordParse, RecordTransform, RecordReduce }
}

resident_device::task_set! {
    /// The conv tile and batch-norm normalize alone: the set of the image `conv_bn`, whose
    /// persistent kernel carries no other task's code.
    pub struct ConvBn { ConvTile, BnNormalize }
}
