//! Runtime configuration and backend selection.

use std::time::Duration;

use crate::KernelImage;
use crate::backend::kind::BackendKind;
use crate::runtime::policy::Residency;

/// How to build a [`crate::Runtime`]. `Default` suits most uses. Fields hidden from the
/// documentation (`worker_flags`, `staging_write_combined`, `stage_streaming`,
/// `relay_publish`, `stream_memops`, `compact_records`) are measurement switches, each
/// the alternative a default was measured against (`DISPATCH_SWEEP=1 cargo bench --bench
/// dispatch`): not part of the API a user builds on, and they may go.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// Which backend (`Auto`: CUDA when a GPU and the image's PTX are there).
    pub backend: BackendKind,
    /// CUDA device ordinal.
    pub device: usize,
    /// Task slots in the ring (a power of two, at least 64, at most 2^21).
    pub capacity: u32,
    /// Slots a worker claims per atomic increment (a power of two, at most 32; the CPU
    /// backend always claims 1).
    pub claim: u32,
    /// Threads per block of the persistent kernel (a multiple of 32; 0: what the kernel
    /// image was built for, [`KernelImage::block_threads`]).
    pub block_threads: u32,
    /// At most this many blocks per SM, and always at least one block slot fewer than
    /// the occupancy query allows: the runtime's own memsets and other streams' kernels
    /// need room beside the persistent kernel.
    pub max_blocks_per_sm: u32,
    /// CPU backend: worker threads (0: one per available core; at most
    /// [`RuntimeConfig::MAX_CPU_WORKERS`]).
    pub cpu_workers: usize,
    /// Worker policies (`resident_shared::worker_flags` bits), for measurement. The
    /// default is `RELEASE_COUNT | SPARSE_LOOK`; `DISPATCH_SWEEP=1 cargo bench --bench
    /// dispatch` measures each flag changed. `PRECLAIM` (measured within the spread of
    /// the runs without it) makes a worker claim the next slot before it runs a task's
    /// body, so that a task that runs for ever holds one later slot hostage (its ticket
    /// never resolves, even after the first is cancelled); like `claim` above 1, it
    /// trades that guarantee for speed.
    #[doc(hidden)]
    pub worker_flags: u32,
    /// CUDA: stage tasks in write-combined pinned memory (fast for the copy engine to
    /// read, uncached for the host) rather than ordinary cached pinned memory.
    #[doc(hidden)]
    pub staging_write_combined: bool,
    /// CUDA on x86-64: write tasks into the host ring with streaming (non-temporal)
    /// stores, which skip reading each line into the host's cache before overwriting
    /// it (host/backend/cuda/nt_store.rs). On by default; off for measurement.
    #[doc(hidden)]
    pub stage_streaming: bool,
    /// How long dropping the runtime waits for queued tasks to drain before it aborts.
    pub shutdown_timeout: Duration,
    /// Longest sleep of an idle worker between two polls of the queue, in nanoseconds:
    /// the wake-up latency it may add against the poll traffic of idle warps.
    pub max_poll_sleep_ns: u32,
    /// Queue slots in the first list run when a resident task list is submitted (a power of
    /// two; 0: no separate first run). Lists are read in place (device/src/lists.rs):
    /// a run costs two small copies (its table entry and `tail`), not a copy of tasks.
    pub list_first_piece: u32,
    /// Queue slots per later list run (a power of two; 0: as many as the ring allows,
    /// half of it).
    pub list_chunk: u32,
    /// Tasks of a resident list that one queue slot stands for (at most
    /// [`resident_shared::MAX_LIST_CHUNK`]; 0: chosen at upload, the list's length over
    /// the workers, so that a list spreads over every worker once; 1: a slot per task).
    /// The warp that claims such a slot runs its tasks one after another and counts
    /// them with one completion (docs/protocol.md 4c). A list with a task
    /// that waits on a counter always takes a slot per task.
    pub list_slot_tasks: u32,
    /// Most tasks per completion segment (a power of two from 32 to 1024; half the ring
    /// caps it too). Every task of a segment adds to one counter, and the last one
    /// writes the segment's record with one system-scope fence: smaller segments spread
    /// the adds of the warps running side by side over more counters and report done
    /// work sooner, at more fences and records (docs/protocol.md, step 4).
    pub segment_tasks: u32,
    /// Slots of the device-side spawn ring: follow-up tasks that running tasks push
    /// (a power of two, from 2 to 2^24; default 2^18, 16 MiB). A push into a full ring
    /// waits for room while other workers pop (up to
    /// `resident_shared::spawn::PUSH_WAIT_NS`), then fails that task with
    /// `Status::QueueFull`.
    pub spawn_capacity: u32,
    /// CUDA: batches of at most this many tasks are published through the relay warp
    /// (one store into mapped pinned memory, no driver call: the low-latency path);
    /// larger ones by copies on the transfer stream. 0: no relay warp.
    pub relay_max_batch: u32,
    /// CUDA: large host batches are written in place into the host ring (mapped pinned
    /// memory) and read from there by the workers, and they and resident task lists
    /// are published by the relay warp (a release store of a commit word in host
    /// memory, no copy, no driver call: device/src/relay.rs, step 7). Off: staged, then
    /// copied by the transfer stream, `tail` then by a stream write (`stream_memops`)
    /// or a copy (kept for comparison).
    #[doc(hidden)]
    pub relay_publish: bool,
    /// CUDA: the copy path (`relay_publish` off) publishes `tail` by a stream memory
    /// operation (`cuStreamWriteValue32`: no copy engine) where the driver takes one,
    /// instead of a 4-byte copy after the slots' copies (host/driver/memops.rs). Off, or
    /// refused: copies only.
    #[doc(hidden)]
    pub stream_memops: bool,
    /// CUDA, with `relay_publish`: a large batch's run whose every task has the 32-byte
    /// form (`resident_shared::CompactTask`: no counter, arguments in 24 bytes) is
    /// written into the host ring in that form, half the bytes for the host to write
    /// and the workers to read over PCIe; a worker widens each task before it runs it.
    /// Off: 64 bytes a task always.
    #[doc(hidden)]
    pub compact_records: bool,
    /// Tasks per publication of a large host batch (a power of two; 0: 1024 when the
    /// relay publishes, else 4096): the workers start on the first while the host
    /// writes the next.
    pub publish_chunk: u32,
    /// Threads that validate and stage one large host batch (at least 4096 tasks), the
    /// submitting thread included (0: one per core, at most 8; 1: the submitting thread
    /// alone). The others are a pool of the runtime's own, started at the first such
    /// batch. Used on the CPU backend, and on CUDA when the relay publishes runs.
    pub submit_threads: usize,
    /// How long the helper threads of those batches stay awake (spinning) after each
    /// pass before they sleep, so that the next large batch finds them awake (woken
    /// from sleep they joined a 20k-task pass 15-23 µs late on average on the H100
    /// machine's host). `None` (the default): 50 µs on the CUDA backend where the host
    /// has at least twice as many cores as a pass has threads, else none (spinning
    /// threads would take cores from the CPU backend's workers or the application).
    pub submit_spin: Option<Duration>,
    /// Partner threads for mid-size host batches (512 to 4095 tasks, within half the
    /// ring): a partner checks and stages the second part of such a batch (about half,
    /// as the partners' pace has been) beside the submitting thread, which commits
    /// every piece (no driver call on a partner), handed the job through a word of its own
    /// on which it spins (`submit_spin` after its last job, then it parks; a caller
    /// never waits for one to wake). `None` (the default): a quarter of the cores, at
    /// most 4, where the helpers spin (`submit_spin`'s default rule), else none.
    /// `Some(0)`: none.
    pub submit_partners: Option<usize>,
    /// How long the first poll of a ticket's future ([`crate::Ticket::wait_async`])
    /// spins for the ticket before it registers with the runtime's notifier thread
    /// and returns `Pending`: a short task is then awaited as fast as a blocking wait,
    /// with no thread hop. It holds the executor's thread that long, once per future.
    /// Zero: never spin.
    pub async_spin: Duration,
    /// The kernel image: which task set the persistent kernel runs (the built-in tasks by
    /// default; a set of yours from `resident::kernel_image!`). The CPU backend's workers
    /// run the same set, compiled for the host.
    pub image: KernelImage,
    /// The watchdog: if the oldest unfinished segment of tasks (at most 1024 tasks,
    /// run in parallel) makes no progress for this long, the runtime aborts the
    /// workers and fails every outstanding ticket with `Error::TaskHung`
    /// (docs/reliability.md). `None`: no watchdog; a hung task then holds its ticket
    /// until a timeout, `close`, or drop.
    pub task_deadline: Option<Duration>,
    /// When the resident kernel gives the GPU back (host/runtime/residency.rs): by default
    /// (`Auto`) after 10 ms idle on a GPU and never on the CPU backend; `Always`, after
    /// an idle time, or whenever the queue drains. Queue, buffers, lists and counters
    /// stay; the next submission relaunches the kernel.
    pub residency: Residency,
    /// CUDA: bytes of one device allocation, made before the persistent kernel starts,
    /// that buffers are carved from (0: each buffer is an allocation of its own).
    /// For compute-sanitizer's memcheck, which judges a kernel's accesses against the
    /// allocations that existed at its launch (host/driver/arena.rs). Default: the
    /// environment's `RESIDENT_BUFFER_ARENA_MB` (MiB), else 0.
    pub buffer_arena: usize,
    /// CUDA: confine the runtime's kernels (the persistent grid and the relay warp) to
    /// this many SMs through a CUDA green context, and size the grid from them, so
    /// that the application's other kernels run on the rest at full speed
    /// ([`crate::Sharing::rest_stream`] gives a stream on the rest). The driver rounds
    /// the count up to its granularity (on sm_90, at least 8 and a multiple of 8;
    /// [`crate::Sharing::partition`] tells what it gave). `None` (the default): the
    /// whole device. Where green contexts are missing (the CPU backend, a driver
    /// older than CUDA 12.5) the runtime refuses to start with
    /// [`crate::Error::PartitionUnsupported`].
    pub sm_partition: Option<u32>,
    /// Test hook (fault injection): the `k`th start of a CPU worker thread (counted over
    /// the pool's life, relaunches after an idle exit too) fails as if the system
    /// refused the thread, so that tests can check what a failed start cleans up.
    #[doc(hidden)]
    pub fail_worker_start: Option<usize>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            backend: BackendKind::Auto,
            device: 0,
            capacity: 1 << 18,
            claim: 1,
            block_threads: 0,
            max_blocks_per_sm: 2,
            cpu_workers: 0,
            worker_flags: resident_shared::worker_flags::RELEASE_COUNT | resident_shared::worker_flags::SPARSE_LOOK,
            staging_write_combined: false,
            stage_streaming: true,
            shutdown_timeout: Duration::from_secs(10),
            max_poll_sleep_ns: 256,
            list_first_piece: 0,
            list_chunk: 0,
            list_slot_tasks: 0,
            segment_tasks: resident_shared::segment::SEGMENT,
            spawn_capacity: resident_shared::spawn::DEFAULT_SPAWN_CAPACITY,
            relay_max_batch: 32,
            relay_publish: true,
            stream_memops: true,
            compact_records: true,
            publish_chunk: 0,
            submit_threads: 0,
            submit_spin: None,
            submit_partners: None,
            async_spin: Duration::from_micros(30),
            image: KernelImage::builtin(),
            task_deadline: None,
            residency: Residency::Auto,
            buffer_arena: std::env::var("RESIDENT_BUFFER_ARENA_MB").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(0) << 20,
            sm_partition: None,
            fail_worker_start: None,
        }
    }
}

impl RuntimeConfig {
    /// Most CPU worker threads a runtime starts (`cpu_workers`): they are threads of
    /// this process, each polling the queue.
    pub const MAX_CPU_WORKERS: usize = 1024;

    /// The defaults, on the CPU backend.
    pub fn cpu() -> Self {
        Self { backend: BackendKind::Cpu, ..Self::default() }
    }
    /// The defaults, on the CUDA backend.
    pub fn cuda() -> Self {
        Self { backend: BackendKind::Cuda, ..Self::default() }
    }
    /// Threads per block of the persistent kernel: the configured number, or the
    /// image's.
    pub(crate) fn block_threads(&self) -> u32 {
        if self.block_threads == 0 { self.image.block_threads } else { self.block_threads }
    }

    /// What the backend reads of this configuration and of its image.
    pub(crate) fn backend_settings(&self) -> crate::backend::settings::Settings {
        let image = &self.image;
        let builtin = KernelImage::builtin();
        crate::backend::settings::Settings {
            device: self.device,
            capacity: self.capacity,
            claim: self.claim,
            block_threads: self.block_threads(),
            max_blocks_per_sm: self.max_blocks_per_sm,
            cpu_workers: self.cpu_workers,
            worker_flags: self.worker_flags,
            staging_write_combined: self.staging_write_combined,
            stage_streaming: self.stage_streaming,
            max_poll_sleep_ns: self.max_poll_sleep_ns,
            spawn_capacity: self.spawn_capacity,
            relay_max_batch: self.relay_max_batch,
            relay_publish: self.relay_publish,
            stream_memops: self.stream_memops,
            compact_records: self.compact_records,
            buffer_arena: self.buffer_arena,
            sm_partition: self.sm_partition,
            fail_worker_start: self.fail_worker_start,
            code: crate::backend::settings::Code {
                name: image.name(),
                task_set: image.task_set(),
                ptx: image.has_ptx().then(|| image.ptx.clone()),
                fingerprint: image.fingerprint,
                scratch_bytes_per_warp: image.scratch_bytes_per_warp,
                cpu_loop: image.set.cpu_loop,
                builtin_name: builtin.name(),
                builtin_ptx: builtin.has_ptx().then(|| builtin.ptx.clone()),
            },
        }
    }

    pub(crate) fn validate(&self) -> crate::Result<()> {
        let bad = |m: &str| Err(crate::Error::Config(m.into()));
        if !self.capacity.is_power_of_two() || self.capacity < 64 || self.capacity > resident_shared::segment::MAX_CAPACITY {
            return bad("capacity must be a power of two in [64, 2^21]");
        }
        if self.submit_spin.is_some_and(|d| d > Duration::from_secs(1)) {
            return bad("submit_spin must be at most 1 s");
        }
        if self.submit_partners.is_some_and(|n| n > 64) {
            return bad("submit_partners must be at most 64");
        }
        if !self.claim.is_power_of_two() || self.claim > 32 {
            return bad("claim must be a power of two no larger than 32");
        }
        if !self.block_threads.is_multiple_of(32) || self.block_threads > 1024 {
            return bad("block_threads must be 0 (the image's) or a multiple of 32 in [32, 1024]");
        }
        if self.cpu_workers > Self::MAX_CPU_WORKERS {
            return bad("cpu_workers must be at most RuntimeConfig::MAX_CPU_WORKERS (1024)");
        }
        if self.max_blocks_per_sm == 0 {
            return bad("max_blocks_per_sm must be at least 1");
        }
        if self.max_poll_sleep_ns > 1_000_000 {
            return bad("max_poll_sleep_ns must be at most 1 ms (the nanosleep limit)");
        }
        if self.list_slot_tasks > resident_shared::MAX_LIST_CHUNK {
            return bad("list_slot_tasks must be at most 32");
        }
        if [self.list_chunk, self.list_first_piece, self.publish_chunk].iter().any(|&c| c != 0 && !c.is_power_of_two()) {
            return bad("list_chunk, list_first_piece and publish_chunk must be 0 or powers of two");
        }
        if !self.segment_tasks.is_power_of_two() || !(32..=resident_shared::segment::SEGMENT).contains(&self.segment_tasks) {
            return bad("segment_tasks must be a power of two from 32 to 1024");
        }
        if !self.spawn_capacity.is_power_of_two() || self.spawn_capacity < 2 || self.spawn_capacity > 1 << 24 {
            return bad("spawn_capacity must be a power of two from 2 to 2^24");
        }
        if self.task_deadline.is_some_and(|d| d < Duration::from_millis(1)) {
            return bad("task_deadline must be at least 1 ms");
        }
        if self.sm_partition == Some(0) {
            return bad("sm_partition must be at least 1 SM (None: the whole device)");
        }
        Ok(())
    }
}
