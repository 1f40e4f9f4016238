//! The fused-op examples' tasks and kernels on the CPU backend (CI): the same device
//! code as on the GPU, smaller sizes.

mod common;

use fused_ops::ConvGeom;
use fused_ops::rnn::RnnShape;
use resident::{BackendKind, Runtime, RuntimeConfig};

fn cpu_nn() -> Runtime {
    Runtime::with_config(RuntimeConfig { cpu_workers: 4, ..fused_ops::config(BackendKind::Cpu) }).unwrap()
}

#[test]
fn conv_bn_fused_matches_reference() {
    // Odd sides: the last tile of a plane is short, and tiles cross rows.
    common::conv_bn_fused_matches_reference(&cpu_nn(), ConvGeom::checked(3, 5, 16, 13, 11).unwrap(), 16, 500);
}

#[test]
fn conv_bn_one_pixel_planes() {
    common::conv_bn_fused_matches_reference(&cpu_nn(), ConvGeom::checked(5, 3, 8, 1, 1).unwrap(), 8, 20);
}

#[test]
fn nn_tasks_validated() {
    common::nn_tasks_validated(&cpu_nn());
}

fn cpu_conv_bn() -> Runtime {
    Runtime::with_config(RuntimeConfig { cpu_workers: 4, ..fused_ops::conv_bn_config(BackendKind::Cpu) }).unwrap()
}

#[test]
fn conv_bn_image_matches_reference() {
    common::conv_bn_fused_matches_reference(&cpu_conv_bn(), ConvGeom::checked(3, 5, 16, 13, 11).unwrap(), 16, 500);
}

#[test]
fn conv_bn_image_validated() {
    common::conv_bn_image_validated(&cpu_conv_bn());
}

#[test]
fn standard_refuses_nn_tasks() {
    common::standard_refuses_nn_tasks(&Runtime::with_config(RuntimeConfig { cpu_workers: 2, ..RuntimeConfig::cpu() }).unwrap());
}

#[test]
fn pipeline_counts_exact() {
    common::pipeline_counts_exact(&cpu_nn(), 20_000, 4_096, 256, 97);
}

#[test]
fn rnn_matches_reference() {
    common::rnn_matches_reference(BackendKind::Cpu, RnnShape { hidden: 64, input: 16, batch: 3, steps: 12 });
}

#[test]
fn rnn_rejects_bad_input() {
    common::rnn_rejects_bad_input(BackendKind::Cpu);
}

// The unfused stage kernels on the CPU device: three launches, then the graph replayed.
#[test]
fn conv_bn_stages_match_reference() {
    common::conv_bn_stages_match_reference(&cpu_conv_bn(), ConvGeom::checked(2, 5, 16, 13, 11).unwrap(), 500);
}
