//! Compiles the example's device crate (`device/`) into two kernel images:
//! - `custom_tasks`: the set `CustomTasks` (the example's tasks and the built-in ones),
//!   with 4 KiB of scratch shared memory per warp for the histogram's private bins;
//! - `custom_only`: the set `CustomOnly` (two of the example's tasks, no built-in ones).
//!
//! The host code loads them with `resident::kernel_image!("custom_tasks")` (and
//! `"custom_only"`).

fn main() {
    resident_build::KernelBuild::new("custom_tasks")
        .device_crate("device")
        .task_set("custom_task_device::CustomTasks")
        .scratch_bytes_per_warp(4096)
        .build();
    resident_build::KernelBuild::new("custom_only").device_crate("device").task_set("custom_task_device::CustomOnly").build();
}
