//! Compiles the runtime's own kernel images with `resident-build` (the helper a user's
//! build script calls for theirs): `resident`, the built-in task set with the runtime's
//! ordinary kernels (`KernelImage::builtin`), and `resident_nn`, the fused-op examples'
//! set and kernels (until they move into their own crate).
//!
//! A missing device toolchain: see `resident_build::toolchain` (fails on a machine with
//! an NVIDIA driver, naming the fix; warns and builds without PTX elsewhere;
//! `RESIDENT_NO_PTX=1` on purpose).

fn main() {
    // Register cap of the standard persistent kernel: 80 lets three 256-thread blocks fit
    // on an SM (two used, one left free, as `CudaBackend::new` wants). Uncapped it takes
    // 88 (ptxas, sm_90, 2026-11-24), and only one block per SM would be used; capped it
    // spills nothing.
    let image = resident_build::KernelBuild::new("resident")
        .device_crate("device")
        .task_set("resident_device::Builtins")
        .kernel("resident_pipeline", "resident_device::kernels::pipeline::Pipeline")
        .kernel("resident_spin_write", "resident_device::kernels::spin_write::SpinWrite")
        .kernel("resident_axpy_flat", "resident_device::kernels::axpy_flat::AxpyFlat")
        .max_registers(Some(80))
        .runtime_crate("crate")
        .build();
    // Register cap of the `Nn` flavor's persistent kernel: uncapped it takes 164
    // registers, so only three 128-thread blocks fit on an SM (two used, one left free);
    // at 128, four fit. Measured on the H100: the fused conv + BN pass at three blocks per
    // SM is 18-23% faster capped than uncapped at two (docs/benchmarks.md).
    resident_build::KernelBuild::new("resident_nn")
        .device_crate("device")
        .task_set("resident_device::nn::NnTasks")
        .kernel("resident_conv_stage", "resident_device::nn::stages::ConvStage")
        .kernel("resident_bn_stats_stage", "resident_device::nn::stages::StatsStage")
        .kernel("resident_bn_norm_stage", "resident_device::nn::stages::NormStage")
        .kernel("resident_rnn", "resident_device::nn::rnn::PersistentRnn")
        .kernel("resident_rnn_feed", "resident_device::nn::rnn::Feed")
        .kernel("resident_rnn_step", "resident_device::nn::rnn::Step")
        .block_threads(128)
        .max_registers(Some(128))
        .runtime_crate("crate")
        .build();
    if image.ptx.is_empty() {
        println!("cargo:rustc-cfg=resident_no_ptx");
    }
}
