//! Which backend runs the tasks: the choice a user configures and a runtime reports.

/// Which backend runs the tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// CUDA when a driver and a device are present, else the CPU.
    Auto,
    /// The persistent kernel on a CUDA device.
    Cuda,
    /// Worker threads on the host running the same device code.
    Cpu,
}
