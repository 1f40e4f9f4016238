//! Compiles the example's device crate into the kernel image `two_stage` (the set
//! `TwoStage`), which both devices' runtimes load.

fn main() {
    resident_build::KernelBuild::new("two_stage").device_crate("device").task_set("multi_gpu_device::TwoStage").build();
}
