//! What a backend is built from: the parts of the runtime's configuration
//! (`RuntimeConfig`, whose documentation says what each field does) and of its kernel
//! image that the backends read, so that they depend on neither.

use resident_shared::KernelParams;

/// The configuration a backend reads (`RuntimeConfig`'s fields of the same names).
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub device: usize,
    pub capacity: u32,
    pub claim: u32,
    pub block_threads: u32,
    pub max_blocks_per_sm: u32,
    pub cpu_workers: usize,
    pub worker_flags: u32,
    pub staging_write_combined: bool,
    pub stage_streaming: bool,
    pub max_poll_sleep_ns: u32,
    pub spawn_capacity: u32,
    pub relay_max_batch: u32,
    pub relay_publish: bool,
    pub stream_memops: bool,
    pub compact_records: bool,
    pub buffer_arena: usize,
    pub sm_partition: Option<u32>,
    pub fail_worker_start: Option<usize>,
    /// The code the workers run.
    pub code: Code,
}

/// The code a backend runs: the kernel image's (`KernelImage`), and the built-in
/// image's PTX for the stream API's kernels.
#[derive(Clone, Debug)]
pub(crate) struct Code {
    /// The image's name, for messages.
    pub name: &'static str,
    /// The name of its task set, for messages.
    pub task_set: &'static str,
    /// Its PTX, if it was built with the device toolchain.
    pub ptx: Option<std::sync::Arc<str>>,
    /// The fingerprint of its task set's ids, which the PTX must carry.
    pub fingerprint: u64,
    /// Scratch memory per warp (shared memory on CUDA).
    pub scratch_bytes_per_warp: u32,
    /// The persistent loop over its set, compiled for the host (the CPU backend's).
    pub cpu_loop: unsafe fn(&KernelParams),
    /// The built-in image's name and PTX (the stream API's kernels), if built.
    pub builtin_name: &'static str,
    pub builtin_ptx: Option<std::sync::Arc<str>>,
}
