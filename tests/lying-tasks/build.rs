//! Compiles the lying tasks' device crate (`device/`) into the kernel image `liars`:
//! the set `Liars` (the lying task types and the built-in ones).

fn main() {
    resident_build::KernelBuild::new("liars").device_crate("device").task_set("lying_tasks_device::Liars").build();
}
