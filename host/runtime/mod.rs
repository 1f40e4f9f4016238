//! [`Runtime`]: the persistent kernel (or CPU workers), its queue, and the operations a
//! user calls: allocate buffers, submit batches, wait, shut down.

pub(crate) mod builder;
pub(crate) mod config;
pub(crate) mod lifecycle;
pub(crate) mod memory_owner;
pub(crate) mod metrics;
pub(crate) mod partition;
pub(crate) mod policy;
pub(crate) mod probe;
pub(crate) mod reclaim;
pub(crate) mod residency;
pub(crate) mod sharing;
pub(crate) mod shutdown;
pub(crate) mod watchdog;

use resident_shared::Task;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::backend::CudaBackend;
use crate::backend::{Backend, BackendInfo, Health};
use crate::driver::context::gpu_present;
use crate::memory::buffer::Buffer;
use crate::memory::reclaim::Reclaim;
use crate::memory::registry::Registries;
use crate::queue::completions::CompletionTracker;
use crate::queue::notifier::{Notifier, Progress};
use crate::queue::producer::{self, Origin, Producer, Source, WhenFull};
use crate::queue::publisher::Publisher;
use crate::queue::task_list::TaskList;
use crate::queue::ticket::Ticket;
use crate::runtime::lifecycle::Lifecycle;
use crate::runtime::probe::Probe;
use crate::{BackendKind, Error, KernelImage, Result, RuntimeConfig};
use resident_shared::Element;

/// How often a waiter asks the driver whether the kernel is still alive.
const HEALTH_PERIOD: Duration = Duration::from_millis(1);

/// State shared by the runtime handle, its tickets and its buffers.
pub(crate) struct Shared {
    pub backend: ManuallyDrop<Backend>,
    pub info: BackendInfo,
    pub config: RuntimeConfig,
    /// The task set the kernel runs: what submissions are checked against.
    pub set: crate::image::task_set::SetInfo,
    /// The reservations (sequence numbers, list-run entries): a short lock per batch.
    pub producer: Mutex<Producer>,
    /// Where the last run in each list-run table entry ends: written and read beside
    /// the reservations, outside their lock (host/queue/run_ends.rs).
    pub run_ends: crate::queue::run_ends::RunEnds,
    /// The live buffers and counters that tasks are checked against.
    pub registries: crate::util::read_mostly::ReadMostly<Registries>,
    /// Publication in sequence order, handed from producer to producer.
    pub publisher: Publisher,
    pub tracker: CompletionTracker,
    pub notifier: Notifier,
    /// Threads that validate and stage large batches beside the submitting one.
    pub helpers: crate::queue::helpers::Helpers,
    pub partners: crate::queue::partners::Partners,
    /// Running, closing, stopped; the fault (host/runtime/lifecycle.rs).
    pub life: Lifecycle,
    /// What drops left for tasks in flight (host/memory/reclaim.rs).
    pub reclaim: Reclaim,
    /// The stream API's handle on this device, made at the first ask (`Runtime::device`):
    /// the same one every time, so that its streams, buffers and events mix.
    gpu: std::sync::OnceLock<crate::stream::Device>,
    last_health: AtomicU64,
    epoch: Instant,
    /// Elastic residency's counts and idle clock (host/runtime/residency.rs).
    pub elastic: crate::runtime::residency::Elastic,
}

impl Shared {
    /// The stream API's handle on this device (`Runtime::device`). Made at the first ask:
    /// on CUDA from the kernels the backend loaded before its persistent kernel started
    /// (it loads no module, which would wait for that kernel), and a stream of its own.
    pub fn gpu(&self) -> Result<crate::stream::Device> {
        if let Some(g) = self.gpu.get() {
            return Ok(g.clone());
        }
        let made = match &*self.backend {
            Backend::Cuda(c) => {
                let (ctx, kernels, claim) = c.stream_parts();
                crate::stream::Device::with_module(ctx, kernels, Some(claim))?
            }
            Backend::Cpu(_) => crate::stream::Device::cpu(),
        };
        // Two first asks racing: one handle is kept, the other dropped.
        Ok(self.gpu.get_or_init(|| made).clone())
    }

    /// The error every operation reports after a fault, if there was one.
    pub fn fault(&self) -> Result<()> {
        self.life.fault()
    }

    /// For operations that start something new (a buffer, a counter, a list, a
    /// submission): the fault, or, once the runtime is closing, what [`Shared::stopped`]
    /// says (the fault behind the close if the backend holds one, else `ShutDown`).
    pub fn usable(&self) -> Result<()> {
        self.fault()?;
        if self.life.is_closing() { Err(self.stopped()) } else { Ok(()) }
    }

    /// [`Shared::fault`], and if none is recorded, the backend's own: a fault the
    /// backend holds but nobody has polled yet (a CPU worker that panicked, a kernel
    /// that trapped) is recorded now (every ticket fails with it, stderr says so), so
    /// that it is the answer from here on. For paths that are about to answer with
    /// something less telling (`ShutDown`, `TaskFailed { Aborted }`); not rate-limited,
    /// so not for hot paths (on CUDA it is a driver query).
    ///
    /// Ordering: the recorded fault as in `Lifecycle::fault` (SeqCst flag). The CPU
    /// backend's fault is under its mutex, inserted before the worker's release store
    /// of `abort` (host/backend/cpu/backend.rs, `start_workers`): a caller that saw a task end
    /// by that abort (through its record's stamp, acquired by the scan, then the
    /// ticket's `finish`/`is_done`) sees it. On CUDA the sticky error is the driver's.
    pub fn fault_now(&self) -> Result<()> {
        self.fault()?;
        let _ = self.bind();
        match self.backend.fault() {
            Some(e) => Err(self.record_fault(e)),
            None => Ok(()),
        }
    }

    /// The answer of a call refused because the runtime is closing, aborted, or its
    /// publication failed: the fault behind it if there is one (recorded now if only
    /// the backend knew it: [`Shared::fault_now`]), else `ShutDown`. Every
    /// producer-facing `ShutDown` goes through here, so a fault is never reported as
    /// a shutdown. Callers hold no lock of the runtime's (it may
    /// record the fault, which takes the tracker's).
    pub fn stopped(&self) -> Error {
        match self.fault_now() {
            Err(e) => e,
            Ok(()) => Error::ShutDown,
        }
    }

    /// No worker can touch queue or buffer memory any more: they left (shutdown, abort)
    /// or died (a device fault). Drops of buffers and lists then free at once.
    pub fn workers_gone(&self) -> bool {
        (self.life.is_stopped() && !self.life.leaked()) || self.backend.workers_gone()
    }

    /// Tells every worker to leave as soon as it can (`abort`: polling workers and
    /// cooperative tasks such as `spin` leave; a task that never polls cannot be
    /// stopped), and every producer waiting for ring space to give up.
    pub fn abort_workers(&self) {
        self.life.set_aborted();
        let _ = self.bind();
        let _ = self.backend.abort();
    }

    /// See [`Lifecycle::is_aborted`].
    pub fn is_aborted(&self) -> bool {
        self.life.is_aborted()
    }

    pub fn bind(&self) -> Result<()> {
        match self.backend.cuda() {
            Some(c) => c.context().bind(),
            None => Ok(()),
        }
    }

    /// Records the runtime's fault (the first one sticks), resolves every unfinished
    /// ticket with it, and says so once (a `tracing` error, or stderr without a
    /// subscriber: `util/report.rs`): an embedding program may never wait on a
    /// ticket, and a dead device must not go unnoticed.
    pub fn record_fault(&self, e: Error) -> Error {
        let (e, first) = self.life.record_fault(e);
        if first {
            crate::util::report::report!(error, "{e}; every outstanding ticket fails with it");
            if let (Error::DeviceFault(_), Some(c)) = (&e, self.backend.cuda()) {
                // The next runtime on this device resets the primary context first.
                c.context().mark_faulted();
            }
            // Pushes of peer links into this runtime end (host/multi/peer_link.rs, P5).
            self.cut_peers();
        }
        self.tracker.fail_all(&e);
        e
    }

    /// The runtime's fault in place of `e` if the device has died (a driver call fails
    /// with a less telling error then), else `e`.
    pub fn explain(&self, e: Error) -> Error {
        // A recorded fault first (a hung task, an exited kernel): the backend may look
        // merely exited by now, which during a close would read as `ShutDown`.
        if let Err(f) = self.fault() {
            return f;
        }
        match self.backend.health() {
            Health::Fault(f) => self.record_fault(f),
            Health::Exited if self.life.is_closing() => Error::ShutDown,
            _ => e,
        }
    }

    /// Asks the backend whether the workers are alive, at most every `HEALTH_PERIOD`;
    /// a dead device (or a hung task, with the watchdog on) fails every unfinished
    /// ticket.
    pub fn poll_health(&self) -> Result<()> {
        self.fault()?;
        let now = self.epoch.elapsed().as_nanos() as u64;
        let last = self.last_health.load(Ordering::Relaxed);
        if now.saturating_sub(last) < HEALTH_PERIOD.as_nanos() as u64
            || self.last_health.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err()
        {
            return Ok(());
        }
        let _ = self.bind();
        match self.backend.health() {
            Health::Running => match self.config.task_deadline {
                Some(d) => match crate::runtime::watchdog::stalled_past(&self.tracker, &self.backend, d) {
                    // The fault first: it resolves every outstanding ticket with
                    // `TaskHung`. Aborted after it, the hung task itself completes
                    // (`Aborted`) into a ticket that is already resolved (H200: the
                    // other order let the scan finish the ticket with `TaskFailed {
                    // Aborted }` first).
                    Some(seq) => {
                        let e = self.record_fault(Error::TaskHung { seq, deadline: d });
                        self.abort_workers();
                        Err(e)
                    }
                    None => Ok(()),
                },
                None => Ok(()),
            },
            Health::Exited if self.life.is_closing() => Err(Error::ShutDown),
            Health::Exited => {
                // Records that landed before the exit still count.
                self.tracker.advance(&self.backend);
                Err(self.record_fault(Error::KernelExited))
            }
            Health::Fault(e) => Err(self.record_fault(e)),
        }
    }

    /// Polls `done` until it holds, the deadline passes, or the device fails. Spins
    /// briefly (completions land within microseconds), then yields, then sleeps, so a
    /// long wait does not take a core from the producers or the CPU workers.
    pub fn wait_until(&self, deadline: Option<Instant>, mut done: impl FnMut() -> bool) -> Result<()> {
        let start = Instant::now();
        let mut polls = 0u32;
        loop {
            if done() {
                return Ok(());
            }
            polls += 1;
            if polls.is_multiple_of(64) {
                self.poll_health()?;
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return if done() { Ok(()) } else { Err(Error::Timeout) };
            }
            let waited = now - start;
            if waited < Duration::from_micros(50) {
                std::hint::spin_loop();
            } else if waited < Duration::from_millis(2) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }
}

impl Shared {
    /// This runtime as the notifier drives it, held weakly.
    pub fn progress(self: &Arc<Self>) -> std::sync::Weak<dyn Progress> {
        let strong: Arc<dyn Progress> = self.clone();
        Arc::downgrade(&strong)
    }
}

impl Progress for Shared {
    fn advance(&self) {
        self.tracker.advance(&self.backend);
    }
    fn poll_health(&self) -> Result<()> {
        Shared::poll_health(self)
    }
    fn idle(&self) -> Option<std::time::Duration> {
        self.residency_tick()
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if self.life.leaked() {
            self.reclaim.leak_all();
        } else {
            // Before the backend, whose streams and context free it.
            self.reclaim();
        }
        if !self.life.leaked() {
            // SAFETY: dropped once, here; the workers have exited.
            unsafe { ManuallyDrop::drop(&mut self.backend) };
        }
    }
}

/// The persistent runtime: one resident kernel (or CPU worker pool) draining a queue.
///
/// ```
/// use resident::{Runtime, RuntimeConfig, Task};
/// let rt = Runtime::with_config(RuntimeConfig::cpu())?;
/// let x = rt.buffer_from(&[1.0f32; 256])?;
/// let y = rt.buffer_from(&[2.0f32; 256])?;
/// rt.submit(&[Task::axpy(3.0, x.all(), y.all())])?.wait()?;
/// assert!(y.read()?.iter().all(|&v| v == 5.0));
/// # Ok::<(), resident::Error>(())
/// ```
pub struct Runtime {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("backend", &self.shared.info).finish()
    }
}

/// Whether this process can use the CUDA backend with the runtime's own image: a
/// driver, a device, and PTX in the image.
pub fn cuda_available() -> bool {
    KernelImage::builtin().has_ptx() && gpu_present()
}

/// CUDA devices this process can use (0 without a driver): one runtime each
/// ([`RuntimeConfig::device`]).
pub fn device_count() -> usize {
    crate::driver::context::device_count().unwrap_or(0)
}

/// The CUDA version the installed driver supports, (major, minor); `None` without a
/// driver.
pub fn cuda_driver_version() -> Option<(u32, u32)> {
    crate::driver::context::driver_version().ok()
}

/// Why a runtime on a machine with a GPU runs on the CPU: said once per process (a
/// `tracing` warning, or stderr), and in [`BackendInfo::fallback`] every time.
fn cpu_fallback(image: &KernelImage) -> String {
    static SAID: std::sync::Once = std::sync::Once::new();
    let why = format!(
        "a CUDA GPU is present, but the kernel image `{}` carries no PTX (it was built without the nvptx toolchain \
         components, or with RESIDENT_NO_PTX): running on the CPU backend",
        image.name()
    );
    SAID.call_once(|| crate::util::report::report!(warn, "{why}"));
    why
}

impl Runtime {
    /// A runtime on the GPU if there is one, else on the CPU. [`Runtime::backend`]
    /// says which.
    pub fn new() -> Result<Self> {
        Self::with_config(RuntimeConfig::default())
    }

    /// A runtime with these settings (the image among them: [`RuntimeConfig::image`]).
    pub fn with_config(config: RuntimeConfig) -> Result<Self> {
        Self::build(config, None)
    }

    /// A runtime whose host-to-device copies go on a stream of the caller's
    /// ([`RuntimeBuilder::transfer_stream`](crate::RuntimeBuilder::transfer_stream)):
    /// CUDA only, on the stream's device.
    pub(crate) fn with_transfer_stream(config: RuntimeConfig, stream: crate::stream::Stream) -> Result<Self> {
        if config.backend == BackendKind::Cpu {
            return Err(Error::Config("a transfer stream needs the CUDA backend".into()));
        }
        if stream.device().cuda_context().map(|c| c.ordinal()) != Some(config.device) {
            return Err(Error::Config("the transfer stream belongs to another device (or the CPU device)".into()));
        }
        Self::build(RuntimeConfig { backend: BackendKind::Cuda, ..config }, Some(stream))
    }

    fn build(config: RuntimeConfig, transfer: Option<crate::stream::Stream>) -> Result<Self> {
        let submit_threads = config.submit_threads;
        config.validate()?;
        let mut fallback = None;
        let kind = match config.backend {
            BackendKind::Auto if gpu_present() && config.image.has_ptx() => BackendKind::Cuda,
            BackendKind::Auto => {
                if gpu_present() {
                    fallback = Some(cpu_fallback(&config.image));
                }
                BackendKind::Cpu
            }
            k => k,
        };
        if kind != BackendKind::Cuda && config.sm_partition.is_some() {
            return Err(Error::PartitionUnsupported("the CPU backend runs on host threads, not SMs".into()));
        }
        let backend = match kind {
            BackendKind::Cuda => {
                let lent = transfer.map(|s| (s.raw(), Box::new(s) as Box<dyn std::any::Any + Send + Sync>));
                Backend::Cuda(CudaBackend::new(&config.backend_settings(), lent)?)
            }
            _ => Backend::Cpu(CpuBackend::new(&config.backend_settings())?),
        };
        let info = BackendInfo { fallback, device: config.device, ..backend.info() };
        let config = RuntimeConfig { residency: config.residency.resolve(info.kind), ..config };
        let capacity = backend.capacity();
        // Helpers may spin after a pass only where no worker threads of the runtime's
        // own need the host's cores (CUDA; the CPU backend's workers are host threads).
        let (submit_spin, spin_ok) = (config.submit_spin, info.kind == BackendKind::Cuda);
        let helpers = crate::queue::helpers::Helpers::new(submit_threads, submit_spin, spin_ok);
        let partners = crate::queue::partners::Partners::configured(config.submit_partners, submit_spin, helpers.lingers_for());
        let deadline = config.task_deadline;
        let residency = config.residency;
        let segment = config.segment_tasks;
        let rt = Self {
            shared: Arc::new(Shared {
                backend: ManuallyDrop::new(backend),
                info,
                set: config.image.set,
                config,
                producer: Mutex::new(Producer::new()),
                run_ends: Default::default(),
                registries: crate::util::read_mostly::ReadMostly::new(Registries::new()),
                publisher: Publisher::default(),
                tracker: CompletionTracker::new(capacity, segment),
                notifier: Notifier::default(),
                helpers,
                partners,
                life: Lifecycle::default(),
                reclaim: Reclaim::default(),
                last_health: AtomicU64::new(0),
                epoch: Instant::now(),
                gpu: std::sync::OnceLock::new(),
                elastic: crate::runtime::residency::Elastic::default(),
            }),
        };
        // The notifier thread watches while idle: the task deadline (every quarter of it)
        // and elastic residency (host/runtime/residency.rs), whichever needs the shorter period.
        let watch = [deadline.map(|d| d / 4), residency.period()].into_iter().flatten().min();
        if let Some(period) = watch {
            rt.shared.notifier.watch(rt.shared.progress(), period)?;
        }
        tracing::info!(target: "resident", backend = %rt.shared.info, capacity, "runtime started");
        Ok(rt)
    }

    /// Polls the workers' health now and returns the runtime's fault, if any: a device
    /// fault (`Error::DeviceFault`), a hung task (`Error::TaskHung`, with the watchdog
    /// on), or an exited kernel. Every outstanding ticket already failed with it. A
    /// runtime that reports a fault is dead: drop it and create a new one.
    pub fn health(&self) -> Result<()> {
        self.shared.poll_health().or_else(|e| if e == Error::ShutDown { Ok(()) } else { Err(e) })?;
        self.shared.fault()
    }

    /// The kernel image this runtime loaded: its task set is what it runs.
    pub fn kernel_image(&self) -> &KernelImage {
        &self.shared.config.image
    }

    /// A stream-API handle on this runtime's device: streams, events, device buffers and
    /// launches of ordinary kernels beside the persistent kernel, on the same context
    /// ([`crate::stream`]). On the CPU backend, the CPU device (`Device::cpu`), the same
    /// handle every time.
    pub fn device(&self) -> Result<crate::stream::Device> {
        self.shared.gpu()
    }

    /// The kernel image's module on this runtime's device (loaded when the runtime
    /// started; on the CPU backend, the image's kernels compiled for the host): its
    /// ordinary kernels, and `resident_one_task`, which runs one task of the set on one
    /// warp (the launch-per-task baseline; [`crate::Probe::one_task_params`]).
    pub fn module(&self) -> Result<crate::stream::Module> {
        let image = &self.shared.config.image;
        let gpu = self.shared.gpu()?;
        match &*self.shared.backend {
            Backend::Cuda(c) => {
                Ok(crate::stream::Module { raw: crate::stream::RawModule::Cuda(c.module().clone()), image: image.name(), gpu })
            }
            Backend::Cpu(_) => gpu.load(image),
        }
    }

    /// The runtime's internals for its benches and baselines (not a stable API):
    /// progress counters that cost no lock, profiling counters, and the parameters of
    /// the one-launch rivals' kernels.
    #[doc(hidden)]
    pub fn probe(&self) -> Probe<'_> {
        Probe { rt: self }
    }

    /// Which backend runs the tasks, with its layout.
    pub fn backend(&self) -> &BackendInfo {
        &self.shared.info
    }

    /// The stream lent with [`RuntimeBuilder::transfer_stream`](crate::RuntimeBuilder::transfer_stream), for work that must be
    /// ordered with the runtime's copies.
    pub fn transfer_stream(&self) -> Option<&crate::stream::Stream> {
        self.shared.backend.cuda()?.lent_transfer()?.downcast_ref()
    }

    /// The runtime's counters now: tasks submitted and completed, compact staging,
    /// elastic residency ([`RuntimeMetrics`]). It takes the reservations' lock once: not
    /// for a loop that polls progress ([`Runtime::wait_idle`] waits for it).
    pub fn metrics(&self) -> crate::RuntimeMetrics {
        // Completed first: it never passes a `submitted` read after it.
        let completed = self.shared.tracker.advance(&self.shared.backend);
        let submitted = self.shared.producer.lock().unwrap_or_else(|e| e.into_inner()).next;
        crate::RuntimeMetrics {
            submitted,
            completed,
            compact_tasks: self.shared.backend.cuda().map_or(0, |c| c.compact_tasks()),
            residency: self.shared.residency_stats(),
        }
    }

    /// A zeroed buffer of `len` elements.
    pub fn buffer<T: Element>(&self, len: usize) -> Result<Buffer<T>> {
        self.shared.usable()?;
        Buffer::new(self.shared.clone(), len)
    }

    /// A device counter for task dependencies ([`Task::after`], [`Task::signals`]),
    /// starting at zero.
    pub fn counter(&self) -> Result<crate::Counter> {
        crate::Counter::new(self.shared.clone())
    }

    /// A buffer holding a copy of `data`.
    pub fn buffer_from<T: Element>(&self, data: &[T]) -> Result<Buffer<T>> {
        let b = self.buffer(data.len())?;
        // No task can name it yet (its handle is not out): no wait.
        b.copy_in(0, data)?;
        Ok(b)
    }

    /// Validates and submits a batch, waiting for ring space if needed. Either every
    /// task is submitted or none is (a typed [`Error::InvalidTask`] names the first bad
    /// one). Batches larger than the ring are fed in as space frees up.
    ///
    /// A large batch (4096 tasks or more, staged on several threads) is checked as it
    /// is written into the ring, after its sequence numbers are taken: a refused one
    /// runs as no-ops in their place (none of its tasks runs; its sequence numbers are
    /// spent), and its error comes once those no-ops are published, which waits for
    /// ring room as its tasks would have. A panic in a task type's `declare` during
    /// that check reaches the caller the same way, after the no-ops. A smaller batch is
    /// checked before it takes any.
    pub fn submit(&self, tasks: &[Task]) -> Result<Ticket> {
        self.submit_inner(tasks, false, WhenFull::Wait)
    }

    pub(crate) fn submit_inner(&self, tasks: &[Task], keep: bool, full: WhenFull) -> Result<Ticket> {
        let state = producer::submit(&self.shared, Source::Host(tasks), keep, full, Origin::User)?;
        let ticket = Ticket { state, shared: self.shared.clone() };
        crate::queue::phases::lap(crate::queue::phases::Phase::Ticket);
        Ok(ticket)
    }

    /// Validates `tasks` once and keeps them in device memory, for
    /// [`TaskList::submit`]: the persistent counterpart of a captured CUDA Graph.
    pub fn upload_tasks(&self, tasks: &[Task]) -> Result<TaskList> {
        TaskList::upload(&self.shared, tasks)
    }

    /// Waits until every task submitted before this call has completed, those of
    /// dropped tickets and reservations too (as `cudaDeviceSynchronize` waits for the
    /// device); the runtime's fault if it has one. A thread that holds an open
    /// reservation of this runtime gets [`Error::ReservationOpen`] (its tasks cannot
    /// complete before it is committed). Without a time limit, a task that never ends
    /// holds it: [`Runtime::wait_idle_timeout`].
    pub fn wait_idle(&self) -> Result<()> {
        self.shared.settle(0, None)?;
        self.shared.fault()
    }

    /// [`Runtime::wait_idle`], giving up with [`Error::Timeout`] after `timeout` (the
    /// tasks keep running).
    pub fn wait_idle_timeout(&self, timeout: Duration) -> Result<()> {
        self.shared.settle(0, crate::util::deadline::after(timeout))?;
        self.shared.fault()
    }

    /// Stops the runtime: every task already submitted runs (drain), then the workers
    /// leave. If the drain takes longer than `shutdown_timeout`, the workers are
    /// aborted, unfinished tickets fail with [`Error::ShutDown`], and this returns
    /// [`Error::Timeout`]. Dropping the runtime does the same, ignoring the result.
    pub fn shutdown(self) -> Result<()> {
        self.shared.shutdown()
    }

    /// [`Runtime::shutdown`] through a shared reference, for when producers on other
    /// threads still hold `&Runtime`: their later submits fail with
    /// [`Error::ShutDown`]. Idempotent; from several threads at once, each returns the
    /// drain's outcome once it has ended. A thread that holds an open
    /// [`crate::Reservation`] of this runtime gets [`Error::ReservationOpen`] and
    /// nothing is done (the drain would wait for that reservation, held by the thread
    /// that waits for the drain).
    pub fn close(&self) -> Result<()> {
        if crate::queue::reservation::open_here(&self.shared) {
            return Err(Error::ReservationOpen);
        }
        self.shared.shutdown()
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let _ = self.shared.shutdown();
    }
}
