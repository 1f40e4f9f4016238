//! Compiles the example's device crate (`device/`) into the kernel image `fused_ops`:
//! its task set (the built-in tasks plus the conv tile, batch-norm normalize and record
//! pipeline stages) and its ordinary kernels (the unfused conv + BN stages, the
//! persistent RNN, its feeder and its per-step baseline). The host code loads it with
//! `resident::kernel_image!("fused_ops")`.

fn main() {
    resident_build::KernelBuild::new("fused_ops")
        .device_crate("device")
        .task_set("fused_ops_device::FusedOps")
        .kernel("conv_stage", "fused_ops_device::stages::ConvStage")
        .kernel("bn_stats_stage", "fused_ops_device::stages::StatsStage")
        .kernel("bn_norm_stage", "fused_ops_device::stages::NormStage")
        .kernel("rnn_persistent", "fused_ops_device::rnn::PersistentRnn")
        .kernel("rnn_feed", "fused_ops_device::rnn::Feed")
        .kernel("rnn_step", "fused_ops_device::rnn::Step")
        // The conv tile needs more registers than the built-in loop: uncapped the kernel
        // takes 164, so only three 128-thread blocks fit on an SM (two used, one left
        // free); at 128, four fit, with about 124 bytes of spills. Measured on the H100
        // (2026-11-23): the fused conv + BN pass at three blocks per SM is 18-23% faster
        // capped than uncapped at two (docs/benchmarks.md).
        .block_threads(128)
        .max_registers(Some(128))
        .build();
}
