//! Compiles the runtime's own kernel image with `resident-build` (the helper a user's
//! build script calls for theirs): `resident`, the built-in task set with the runtime's
//! ordinary kernels (`KernelImage::builtin`).
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
        .task_set("resident_device::Builtins")
        .kernel("resident_pipeline", "resident_device::kernels::pipeline::Pipeline")
        .kernel("resident_spin_write", "resident_device::kernels::spin_write::SpinWrite")
        .kernel("resident_axpy_flat", "resident_device::kernels::axpy_flat::AxpyFlat")
        .kernel("resident_tree_level", "resident_device::kernels::tree_level::TreeLevel")
        .kernel("resident_tree_grow", "resident_device::kernels::tree_level::TreeGrow")
        .max_registers(Some(80))
        .runtime_crate("crate")
        .build();
    if image.ptx.is_empty() {
        println!("cargo:rustc-cfg=resident_no_ptx");
    }
    // A profiling build (docs/profiling.md): `resident-build` compiled the device code
    // with its step counters; the host allocates their table and reads it.
    if resident_build::device_timing() {
        println!("cargo:rustc-cfg=resident_device_timing");
    }
    // For the build scripts of crates that depend on this one and build kernel images
    // of their own: where `resident-device` and `resident-shared` lie
    // (`DEP_RESIDENT_DEVICE_ROOT`, `DEP_RESIDENT_DEVICE_SHARED_ROOT`), as cargo resolved
    // them for this build. `resident-build` reads them.
    let dep = |var: &str| std::env::var(var).unwrap_or_else(|_| panic!("resident-device's build script sets {var}"));
    println!("cargo:device_root={}", dep("DEP_RESIDENT_DEVICE_ROOT"));
    println!("cargo:device_shared_root={}", dep("DEP_RESIDENT_DEVICE_SHARED_ROOT"));
}
