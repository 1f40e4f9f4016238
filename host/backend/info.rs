//! What a backend says about itself and hands out: its description, the workers'
//! liveness, and the memory it allocates.

/// What runs the tasks, for display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendInfo {
    /// CUDA or CPU.
    pub kind: crate::backend::kind::BackendKind,
    /// Device name, or "CPU".
    pub name: String,
    /// Workers polling the queue (warps on a GPU, threads on the CPU).
    pub workers: u32,
    /// How the workers are laid out, in words.
    pub layout: String,
    /// The device: the CUDA ordinal (`RuntimeConfig::device`), or on the CPU backend the
    /// simulated device it was given (a label: several CPU runtimes stand in for
    /// several devices, docs/scaling.md).
    pub device: usize,
    /// Task slots in the queue's ring.
    pub capacity: usize,
    /// Why the CPU backend runs although a GPU is present (`BackendKind::Auto` with a
    /// kernel image built without PTX), if it does.
    pub fallback: Option<String>,
}

impl std::fmt::Display for BackendInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            crate::backend::kind::BackendKind::Cuda => "CUDA",
            _ => "CPU",
        };
        write!(f, "{kind} backend: {} ({})", self.name, self.layout)?;
        match &self.fallback {
            Some(why) => write!(f, "; {why}"),
            None => Ok(()),
        }
    }
}

/// Liveness of the workers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Health {
    Running,
    /// Every worker left the loop (after the sentinel or an abort).
    Exited,
    Fault(crate::Error),
}

/// Memory owned by a backend: device memory (CUDA) or a host allocation (CPU).
#[derive(Debug)]
pub(crate) enum Memory {
    Cuda(crate::driver::memory::DeviceAlloc),
    /// A block of the runtime's buffer arena (`RuntimeConfig::buffer_arena`).
    CudaArena(crate::driver::arena::ArenaBlock),
    Cpu(crate::backend::cpu::HostAlloc),
}

impl Memory {
    pub fn addr(&self) -> u64 {
        match self {
            Memory::Cuda(m) => m.ptr(),
            Memory::CudaArena(m) => m.ptr(),
            Memory::Cpu(m) => m.ptr() as u64,
        }
    }
}
