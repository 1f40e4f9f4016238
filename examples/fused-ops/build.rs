//! Compiles the example's device crate (`device/`) into two kernel images:
//! - `fused_ops`: the set `fused_ops_device::FusedOps` (the built-in tasks plus the conv
//!   tile, batch-norm normalize and record pipeline stages) and the persistent RNN's
//!   kernels (the RNN, its feeder and its per-step baseline);
//! - `conv_bn`: the set `fused_ops_device::ConvBn` (the conv tile and normalize alone)
//!   and the unfused conv + BN stage kernels, its baselines.
//!
//! The host code loads them with `resident::kernel_image!("fused_ops")` and
//! `resident::kernel_image!("conv_bn")`.

fn main() {
    // Both persistent kernels carry the conv tile, which needs more registers than the
    // built-in loop, in 128-thread blocks capped at 128 registers (four blocks fit on an
    // SM). Uncapped, the kernel of `fused_ops` takes 164 registers (three blocks fit);
    // capped, ptxas spills about 124 bytes there, and the fused conv + BN pass is 18-23%
    // faster capped at three blocks per SM than uncapped at two (H100, 2026-11-23). The
    // kernel of `conv_bn` takes 133 uncapped and spills 12
    // bytes capped: it carries no other task's code.
    resident_build::KernelBuild::new("fused_ops")
        .device_crate("device")
        .task_set("fused_ops_device::FusedOps")
        .kernel("rnn_persistent", "fused_ops_device::rnn::PersistentRnn")
        .kernel("rnn_feed", "fused_ops_device::rnn::Feed")
        .kernel("rnn_step", "fused_ops_device::rnn::Step")
        .block_threads(128)
        .max_registers(Some(128))
        // No resident lists here: the loop carries no list-chunk code (its registers
        // became spills around the conv tile's).
        .list_chunks(false)
        .build();
    resident_build::KernelBuild::new("conv_bn")
        .device_crate("device")
        .task_set("fused_ops_device::ConvBn")
        .kernel("conv_stage", "fused_ops_device::stages::ConvStage")
        .kernel("bn_stats_stage", "fused_ops_device::stages::StatsStage")
        .kernel("bn_norm_stage", "fused_ops_device::stages::NormStage")
        .block_threads(128)
        .max_registers(Some(128))
        .list_chunks(false)
        .build();
}
