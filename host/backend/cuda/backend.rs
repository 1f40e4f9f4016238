//! The persistent kernel and its queue memory on a CUDA device.
//!
//! Memory layout and who writes what:
//! - ring (device memory): written by the relay (inline batches) and, with
//!   `relay_publish` off, by the transfer stream's copies from `staging`;
//! - staging, the host ring (pinned, mapped; cached by default, write-combined on
//!   request): the host's twin of the ring, written by producers into their reserved
//!   slots; read in place by the workers over PCIe when the relay publishes runs over
//!   it (docs/protocol.md, R9), else by the copy engine;
//! - tails (pinned): one `u32` per slot, the source of the 4-byte copy that publishes
//!   `tail` where stream writes are refused; a publication ending at `end` uses entry
//!   `(end - 1) % capacity`, which is not reused before slot `end - 1` itself is, so the
//!   copy's source stays intact;
//! - header (device memory): `head` by the workers' atomics, `tail` by the relay (and,
//!   with `relay_publish` off, on the transfer stream by a stream write, or a 4-byte
//!   copy where stream writes are refused: host/driver/memops.rs), `abort` by a memset on the
//!   control stream, `stop` and `stop_at` by the sentinel;
//! - completions (pinned, mapped, cached): per-task records, written by the workers
//!   over PCIe (posted writes) only for failed tasks and tickets that want results;
//! - segment counts (device memory): the workers' per-segment atomics;
//! - segment records (pinned, mapped, cached): one per segment, written by the worker
//!   that completes it, polled by the host (`resident_shared::segment`);
//! - counters (device memory): the device-side dependency counters; reset by a
//!   synchronous copy when the host hands one out;
//! - buffer table (device memory): written by synchronous copies under the registries'
//!   write lock;
//! - list runs (device memory, `resident_shared::lists`): each entry by the relay from
//!   the mailbox's copy of the table (`relay_publish`), or by a 16-byte copy on the
//!   transfer stream from its own pinned mailbox (`run_mail`) before the copy into
//!   `tail` that publishes the run; an entry, and its mailbox, is written again only
//!   once its last run has completed (the producer waits for that).
//!
//! The copy path publishes `tail` by a stream write where the driver takes one
//! (`RuntimeConfig::stream_memops`, host/driver/memops.rs: no copy-engine round trip for the
//! 4 bytes), else by a 4-byte copy; stream memory operations are an optional platform
//! feature.
//!
//! Three streams, all non-blocking: the kernel's, the transfer stream (copies and
//! `tail`), and a control stream (`abort`), so that an abort is never stuck behind a
//! copy.

use bytemuck::Zeroable;
use cudarc::driver::sys::{self, CUfunction};
use resident_shared::lists::{LIST_RUNS, ListRun};
use resident_shared::relay::LL_SLOTS;
use resident_shared::{
    BufferEntry, COUNTER_TABLE_WORDS, CompactTask, Completion, KernelParams, MAX_BUFFERS, QueueHeader, SegmentCount, SegmentDone, Task,
};
use std::ffi::c_void;
use std::sync::Arc;

use std::time::Duration;

use super::nt_store;
use super::relay::Relay;
use crate::backend::info::{BackendInfo, Health, Memory};
use crate::backend::kind::BackendKind;
use crate::backend::park::{PARKED, RUNNING};
use crate::backend::placement::Placement;
use crate::backend::settings::Settings;
use crate::driver::arena::Arena;
use crate::driver::context::{Context, RuntimeClaim, check};
use crate::driver::launch::launch_1d;
use crate::driver::memops;
use crate::driver::memory::{DeviceAlloc, PinnedAlloc};
use crate::driver::module::Module;
use crate::driver::stream::{Stream, StreamState, Transfer};
use crate::{Error, Result};

pub(crate) struct CudaBackend {
    /// Held while this backend's kernels may run (`crate::driver::resident_kernels`): pinned
    /// frees of the process wait until no such kernel runs. First, so that it is
    /// released before this backend's own pinned memory is freed.
    resident: std::sync::Mutex<Option<crate::driver::resident_kernels::Resident>>,
    // Field order is drop order: memory first (freed on the transfer stream), then the
    // module, then the streams, then the context.
    ring: DeviceAlloc,
    header: DeviceAlloc,
    table: DeviceAlloc,
    lists: DeviceAlloc,
    run_mail: PinnedAlloc,
    staging: PinnedAlloc,
    tails: PinnedAlloc,
    completions: PinnedAlloc,
    segment_counts: DeviceAlloc,
    segment_done: PinnedAlloc,
    counters: DeviceAlloc,
    spawn: DeviceAlloc,
    /// The links' outboxes (host/multi/link.rs), in link-table order: mapped pinned memory
    /// that this device's warps push into and the forwarder reads; they live as long
    /// as the kernel may push.
    outboxes: std::sync::Mutex<Vec<PinnedAlloc>>,
    /// Peer links' inboxes, drained here or pushed into from here (host/backend/cuda/peer.rs).
    peer: super::peer::PeerState,
    /// Where buffers are carved from, if `RuntimeConfig::buffer_arena` asks for one.
    arena: Option<Arc<Arena>>,
    spawn_capacity: u32,
    relay: Relay,
    wait_ticket: CUfunction,
    /// The built-in image's module (this image's own when it is the built-in one),
    /// loaded before the persistent kernel started (module loads wait for running
    /// kernels): the stream API's kernels (`Runtime::device`).
    kernels: Arc<Module>,
    // Owns the kernels; unloaded after the streams are idle.
    module: Arc<Module>,
    kernel_stream: Stream,
    /// The SM partition the kernels run in (`RuntimeConfig::sm_partition`).
    partition: Option<crate::driver::green::Partition>,
    transfer: Transfer,
    control: Stream,
    ctx: Context,
    /// This device's one runtime of the process; dropped after everything above.
    _claim: Arc<RuntimeClaim>,
    capacity: u32,
    /// `RuntimeConfig::stage_streaming`.
    stage_streaming: bool,
    /// `RuntimeConfig::compact_records`.
    compact_records: bool,
    /// Tasks staged in the compact form so far (`Runtime::metrics`, `compact_tasks`).
    compact_tasks: crate::util::striped::StripedCounter,
    /// The copy path writes `tail` by a stream write (host/driver/memops.rs), not a copy; off
    /// for good once the transfer stream refuses one (a lent stream may, where the
    /// probe's stream did not).
    tail_by_write: std::sync::atomic::AtomicBool,
    /// The persistent kernel and its parameters, kept for relaunches (elastic
    /// residency: host/runtime/residency.rs).
    persistent: CUfunction,
    params: KernelParams,
    /// Elastic residency: running, parking or parked (`crate::backend::park::ParkState`).
    park: crate::backend::park::ParkState,
    /// Where the last exit left the queue (`next`, `runs`): a failed relaunch resets it
    /// there again.
    resume: std::sync::Mutex<(u64, u64)>,
    grid: u32,
    block: u32,
    /// Dynamic shared memory per block: the warps' scratch.
    smem: u32,
    /// Profiling builds (`resident_device_timing`, docs/profiling.md): each worker
    /// warp's step counters (`resident_shared::steps`), mapped pinned memory the warps
    /// write. `None` in ordinary builds.
    steps: Option<PinnedAlloc>,
    sms: u32,
    name: String,
}

// SAFETY: all handles are driver objects usable from any thread once the context is
// bound; the raw function handle is immutable.
unsafe impl Send for CudaBackend {}
unsafe impl Sync for CudaBackend {}

impl CudaBackend {
    /// `transfer`: a stream the user lends for the runtime's copies (its raw handle and
    /// its owner), or `None` for one of the runtime's own.
    pub fn new(config: &Settings, transfer: Option<(sys::CUstream, Box<dyn std::any::Any + Send + Sync>)>) -> Result<Self> {
        let ctx = Context::new(config.device)?;
        let claim = Arc::new(ctx.claim_runtime()?);
        ctx.bind()?;
        let code = &config.code;
        let module = Arc::new(Module::load(&ctx, code.name, code.ptx.as_deref())?);
        // The PTX must be the set's the host checks tasks against (a build that paired
        // them wrongly would run other code under the same ids).
        if let Some(found) = module.global_u64("RESIDENT_SET_FINGERPRINT")?
            && found != code.fingerprint
        {
            return Err(Error::Config(format!(
                "kernel image `{}`: its PTX was built for another task set than `{}` (fingerprint {found:#x}, want {:#x})",
                code.name, code.task_set, code.fingerprint
            )));
        }
        let persistent = module.function("resident_persistent")?;
        // The stream API's kernels: this module when the image is the built-in one,
        // else the built-in image loaded now (before the persistent kernel starts).
        let kernels = if code.ptx == code.builtin_ptx {
            module.clone()
        } else {
            Arc::new(Module::load(&ctx, code.builtin_name, code.builtin_ptx.as_deref())?)
        };
        // The SM partition, if asked for: both kernels' streams are made in its green
        // context, so that they run on its SMs only (host/driver/green.rs).
        let partition = match config.sm_partition {
            Some(n) => Some(crate::driver::green::split(&ctx, n)?),
            None => None,
        };
        let resident_stream = || match &partition {
            Some(p) => Stream::in_green(&p.runtime, 0),
            None => Stream::non_blocking(&ctx, 0),
        };
        let kernel_stream = resident_stream()?;
        let wait_ticket = module.function("resident_wait_ticket")?;
        let transfer = match transfer {
            // SAFETY: the caller checked that the stream belongs to this device's
            // primary context; the owner keeps it alive.
            Some((raw, owner)) => unsafe { Transfer::lent(raw, owner) },
            None => Transfer::own(Stream::non_blocking(&ctx, 0)?),
        };
        let control = Stream::non_blocking(&ctx, 0)?;
        let capacity = config.capacity;
        let (t, c) = (size_of::<Task>(), size_of::<Completion>());
        unsafe {
            let ring = DeviceAlloc::zeroed_sync(&ctx, capacity as usize * t)?;
            let header = DeviceAlloc::zeroed_sync(&ctx, size_of::<QueueHeader>())?;
            // Whether the driver takes stream writes, asked only where the copy path
            // publishes (with `relay_publish` the relay is `tail`'s only writer): a
            // write of 0 into the zeroed `tail` on the control stream (ours, empty),
            // waited for before anything else can write `tail` (no kernel runs yet; a
            // probe left in flight on the transfer stream, which may be the user's and
            // busy, could land after the relay's first store and move `tail` back).
            let tail = header.ptr() + std::mem::offset_of!(QueueHeader, tail) as u64;
            let tail_by_write = config.stream_memops && !config.relay_publish && memops::probe(control.raw(), tail, 0);
            if tail_by_write {
                // A failed wait is a broken context: reported, not guessed past.
                control.synchronize()?;
            }
            let tail_by_write = std::sync::atomic::AtomicBool::new(tail_by_write);
            // The buffer table, then the link table and the links' `enqueue` counters
            // (`resident_shared::link`).
            let table = DeviceAlloc::zeroed_sync(&ctx, resident_shared::link::TABLES_BYTES)?;
            let lists = DeviceAlloc::zeroed_sync(&ctx, LIST_RUNS * size_of::<ListRun>())?;
            let run_mail = PinnedAlloc::zeroed(&ctx, LIST_RUNS * size_of::<ListRun>(), false)?;
            let staging = PinnedAlloc::zeroed(&ctx, capacity as usize * t, config.staging_write_combined)?;
            let tails = PinnedAlloc::zeroed(&ctx, capacity as usize * size_of::<u32>(), false)?;
            let completions = PinnedAlloc::zeroed(&ctx, capacity as usize * c, false)?;
            let segment_counts = DeviceAlloc::zeroed_sync(&ctx, capacity as usize * size_of::<SegmentCount>())?;
            let segment_done = PinnedAlloc::zeroed(&ctx, capacity as usize * size_of::<SegmentDone>(), false)?;
            // Host-visible pinned memory, `capacity` records each; no kernel runs yet.
            crate::backend::records::spend_records(
                completions.host_ptr() as *mut Completion,
                segment_done.host_ptr() as *mut SegmentDone,
                capacity,
            );
            let counters = DeviceAlloc::zeroed_sync(&ctx, COUNTER_TABLE_WORDS * size_of::<u32>())?;
            let relay = Relay::new(&ctx, resident_stream()?, config.relay_max_batch, config.relay_publish, &module)?;
            relay.set_host_ring(staging.device_ptr());
            // Before the launch, so that compute-sanitizer counts it (host/driver/arena.rs).
            let arena = if config.buffer_arena > 0 { Some(Arena::new(&ctx, config.buffer_arena)?) } else { None };

            // The grid is sized from the SMs the kernel may run on.
            let sms = match &partition {
                Some(p) => p.runtime.sms(),
                None => ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
            };
            let block = config.block_threads;
            // Scratch shared memory: each warp's share, for the kernel's life.
            let smem = (block / 32) as usize * code.scratch_bytes_per_warp as usize;
            if smem > 48 * 1024 {
                let optin = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as usize;
                if smem > optin {
                    return Err(Error::Config(format!(
                        "kernel image `{}`: {smem} bytes of scratch per block ({block} threads); the device allows {optin}",
                        code.name
                    )));
                }
                let attr = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
                check(sys::cuFuncSetAttribute(persistent, attr, smem as i32), "cuFuncSetAttribute(max dynamic shared memory)")?;
            }
            let mut per_sm = 0;
            check(
                sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut per_sm, persistent, block as i32, smem),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            )?;
            if per_sm < 2 {
                return Err(Error::Config(format!(
                    "only {per_sm} block(s) of {block} threads ({smem} bytes of scratch each) fit on an SM; the runtime needs room for one more"
                )));
            }
            // Every block must be co-resident: the grid never exceeds what the
            // occupancy query allows. And one block slot per SM always stays free: the
            // runtime's own memsets (zeroing a new buffer) and other streams' kernels
            // need an SM too. At full occupancy a buffer allocation waited forever on
            // its memset (H100, 2026-11-22).
            let grid = sms * (per_sm as u32 - 1).min(config.max_blocks_per_sm);
            // The spawn ring, with a batch area for every worker warp of the grid.
            let spawn = DeviceAlloc::zeroed_sync(&ctx, resident_shared::spawn::bytes(config.spawn_capacity, grid * (block / 32)))?;
            let name = ctx.name();
            let steps = if cfg!(resident_device_timing) {
                let warps = (grid * (block / 32)) as usize;
                Some(PinnedAlloc::zeroed(&ctx, warps * resident_shared::steps::STEPS * size_of::<u64>(), false)?)
            } else {
                None
            };
            let mut this = Self {
                resident: std::sync::Mutex::new(None),
                ring,
                header,
                table,
                lists,
                run_mail,
                staging,
                tails,
                completions,
                segment_counts,
                segment_done,
                counters,
                spawn,
                outboxes: std::sync::Mutex::new(Vec::new()),
                peer: Default::default(),
                spawn_capacity: config.spawn_capacity,
                relay,
                arena,
                wait_ticket,
                kernels,
                module,
                kernel_stream,
                partition,
                transfer,
                control,
                ctx,
                _claim: claim,
                capacity,
                stage_streaming: config.stage_streaming,
                compact_records: config.compact_records,
                compact_tasks: Default::default(),
                tail_by_write,
                persistent,
                params: KernelParams::zeroed(),
                park: crate::backend::park::ParkState::new(),
                resume: std::sync::Mutex::new((0, 0)),
                grid,
                block,
                smem: smem as u32,
                steps,
                sms,
                name,
            };
            this.params = this.kernel_params(config);
            if let Err(e) = this.launch(false) {
                // What started (the persistent kernel, if the relay's launch failed)
                // must stop before its memory goes: abort, and wait for both kernels.
                // One that does not leave keeps its memory (freeing it under a running
                // kernel would fault it, and pinned frees wait for it forever).
                let _ = this.abort();
                if !this.wait_exit(Some(Duration::from_secs(5))) {
                    this.ctx.mark_wedged();
                    std::mem::forget(this);
                }
                return Err(e);
            }
            Ok(this)
        }
    }

    fn kernel_params(&self, config: &Settings) -> KernelParams {
        KernelParams {
            ring: self.ring.ptr(),
            header: self.header.ptr(),
            completions: self.completions.device_ptr(),
            segment_counts: self.segment_counts.ptr(),
            segment_done: self.segment_done.device_ptr(),
            buffers: self.table.ptr(),
            counters: self.counters.ptr(),
            capacity: self.capacity,
            claim: config.claim,
            flags: config.worker_flags,
            max_sleep_ns: config.max_poll_sleep_ns,
            spawn: self.spawn.ptr(),
            spawn_capacity: self.spawn_capacity,
            workers: self.grid * (self.block / 32),
            relay: self.relay.device_ptr(),
            lists: self.lists.ptr(),
            steps: self.steps.as_ref().map_or(0, |s| s.device_ptr()),
        }
    }

    /// Launches the persistent kernel, then the relay.
    ///
    /// # Safety
    /// No kernel of this backend runs, and the queue is as a launch needs it (new, or
    /// reset by `park`).
    unsafe fn launch(&self, relay_first: bool) -> Result<()> {
        let params = self.params;
        // Before either launch: pinned frees of the process wait from now on, until
        // `wait_exit` sees both kernels ended.
        *self.resident.lock().unwrap_or_else(|e| e.into_inner()) = Some(crate::driver::resident_kernels::Resident::launching());
        if relay_first {
            // A relaunch: the relay first, so that the task that caused it (inline, and
            // run by the relay itself when it is a lone leaf: device/src/relay.rs, 3b)
            // does not wait for the persistent grid to come up.
            self.relay.launch(&params)?;
        }
        // SAFETY: the persistent kernel takes one `KernelParams`, whose memory (all of
        // this backend's) outlives the kernel: it is freed only after the kernel exits.
        unsafe {
            launch_1d(
                self.persistent,
                self.kernel_stream.raw(),
                self.grid,
                self.block,
                self.smem,
                &params,
                "cuLaunchKernel(resident_persistent)",
            )
        }?;
        if !relay_first {
            self.relay.launch(&params)?;
        }
        match self.kernel_stream.state() {
            StreamState::Failed(e) => Err(e),
            _ => Ok(()),
        }
    }

    pub fn info(&self) -> BackendInfo {
        let warps = self.grid * self.block / 32;
        let tail = match (self.relay.runs(), self.tail_by_write.load(std::sync::atomic::Ordering::Relaxed)) {
            (true, _) => "published by the relay",
            (false, true) => "copy path's tail by stream write",
            (false, false) => "copy path's tail by copy",
        };
        BackendInfo {
            kind: BackendKind::Cuda,
            name: self.name.clone(),
            workers: warps,
            layout: match &self.partition {
                Some(p) => format!(
                    "{} of {} SMs (green context), {} blocks x {} threads = {} worker warps; {tail}",
                    self.sms, p.total, self.grid, self.block, warps
                ),
                None => format!("{} SMs, {} blocks x {} threads = {} worker warps; {tail}", self.sms, self.grid, self.block, warps),
            },
            device: 0,
            capacity: self.capacity as usize,
            fallback: None,
        }
    }

    pub(super) fn peer_state(&self) -> &super::peer::PeerState {
        &self.peer
    }

    pub(super) fn relay(&self) -> &Relay {
        &self.relay
    }

    /// Time slices other contexts took from the kernel, as the relay saw them, and the
    /// last one's length in nanoseconds (`RelayMailbox::slices`; zero without a relay).
    pub fn time_slices(&self) -> (u64, u64) {
        self.relay.slices()
    }

    /// Whether the relay warp runs (peer links' inboxes are drained by it).
    pub fn relay_enabled(&self) -> bool {
        self.relay.enabled()
    }

    /// The SM partition the kernels run in, if the config asked for one.
    pub fn partition(&self) -> Option<&crate::driver::green::Partition> {
        self.partition.as_ref()
    }

    pub fn relayed(&self) -> Option<u64> {
        self.relay.enabled().then(|| self.relay.relayed())
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Whether `n` tasks are staged with streaming stores: runs that no host thread
    /// reads back, more tasks than an inline batch holds (an inline batch is read back
    /// by `publish`), which also keeps one-task pushes of a `Reservation` from paying a
    /// fence each.
    fn streams(&self, n: usize) -> bool {
        self.stage_streaming && n > LL_SLOTS / 2
    }

    pub unsafe fn stage(&self, first: u64, tasks: &[Task], place: Placement) {
        let base = self.staging.host_ptr() as *mut Task;
        let mask = self.capacity as u64 - 1;
        if self.streams(tasks.len()) {
            for (i, t) in tasks.iter().enumerate() {
                // SAFETY: as below; slots are 64-byte records in a page-aligned ring.
                unsafe { nt_store::write_record(base.add(((first + i as u64) & mask) as usize), place.apply(i, t)) };
            }
            // The records before any later store of this thread, the publication among
            // them (streaming stores are weakly ordered: host/backend/cuda/nt_store.rs).
            nt_store::fence();
            return;
        }
        for (i, t) in tasks.iter().enumerate() {
            // SAFETY: in bounds; the slot's previous copy has completed, since its task
            // completed (caller's contract). Sequential whole-record stores, so that
            // write-combined staging streams too.
            unsafe { base.add(((first + i as u64) & mask) as usize).write(place.apply(i, t)) };
        }
    }

    /// Stages a run over the host ring (`first..` up to the ring's end at most): in the
    /// compact form if every task has it and `compact_records` is on, else as
    /// [`CudaBackend::stage`]. Returns whether the run is compact, which its commit must
    /// say (`lists::COMPACT`).
    ///
    /// A compact run of `n` tasks fills the second half of its own `n` slots: task `j`
    /// at byte `32 (n + j)` from its first slot (`resident_shared::relay::COMPACT_RUN`),
    /// so that the slot holding task `j` is slot `(n + j) / 2 >= j` of the run. The
    /// room rule lets the next lap write slot `m` once every task up to `m` completed
    /// (at most: `completed` moves by whole segments), so a record is rewritten only
    /// after its own task completed, as in the full form. (Packed from the first slot,
    /// slot `m` would hold tasks `2m` and `2m + 1`, which may not have run then: the
    /// first version did, and a review found it; tests/gpu.rs,
    /// `compact_runs_beside_next_lap_writers`.)
    ///
    /// # Safety
    /// As for [`CudaBackend::stage`]; the run must not cross the ring's end.
    pub unsafe fn stage_run(&self, first: u64, tasks: &[Task], place: Placement) -> bool {
        let slot = (first & (self.capacity as u64 - 1)) as usize;
        let n = tasks.len();
        // (A run never crosses the ring's end (`plan`); if one did, it goes in full.)
        if self.compact_records && self.relay.runs() && slot + n <= self.capacity as usize {
            // SAFETY: within the ring (just checked): the second half of the run's slots.
            let base = unsafe { (self.staging.host_ptr() as *mut Task).add(slot).cast::<CompactTask>().add(n) };
            let streaming = self.streams(n);
            let mut all = true;
            for (i, t) in tasks.iter().enumerate() {
                let Some(c) = place.apply(i, t).compact() else {
                    all = false;
                    break;
                };
                // SAFETY: in the run's slots (this batch's, free: caller), 16-byte
                // aligned (a multiple of 32 bytes into the page-aligned ring).
                unsafe { if streaming { nt_store::write_record(base.add(i), c) } else { base.add(i).write(c) } }
            }
            if streaming {
                // The records before any later store of this thread: the publication,
                // or the full records below over the same bytes.
                nt_store::fence();
            }
            if all {
                self.compact_tasks.add(n as u64);
                return true;
            }
        }
        // SAFETY: the caller's contract.
        unsafe { self.stage(first, tasks, place) };
        false
    }

    /// Profiling builds: the worker warps' step counters, summed (what they last
    /// stored; `resident_shared::steps`). `None` in ordinary builds. A relaunch (after
    /// an idle exit) starts the warps' counts from zero again, so a sum may go down.
    pub fn device_steps(&self) -> Option<[u64; resident_shared::steps::STEPS]> {
        let steps = self.steps.as_ref()?;
        let words = (self.grid * (self.block / 32)) as usize * resident_shared::steps::STEPS;
        let base = steps.host_ptr() as *mut u64;
        let mut sum = [0u64; resident_shared::steps::STEPS];
        for i in 0..words {
            // SAFETY: `i` is within the allocation (`STEPS` words a worker warp, the
            // grid this backend launches), 8-byte aligned, live as long as `self`.
            // Relaxed atomic loads: the warps store these words while the kernel runs
            // (each one aligned 8-byte store); nothing is read through them.
            let w = unsafe { std::sync::atomic::AtomicU64::from_ptr(base.add(i)) }.load(std::sync::atomic::Ordering::Relaxed);
            sum[i % sum.len()] = sum[i % sum.len()].wrapping_add(w);
        }
        Some(sum)
    }

    /// Tasks staged in the compact form so far.
    pub fn compact_tasks(&self) -> u64 {
        self.compact_tasks.sum()
    }

    /// Whether a batch of `n` tasks goes inline through the relay.
    pub fn inline(&self, n: u64) -> bool {
        self.relay.enabled() && self.relay.takes(n)
    }

    pub fn publish(&self, first: u64, end: u64) -> Result<()> {
        if self.inline(end - first) {
            // The placed tasks, as staged: the relay sends them inline (no copy of them
            // into the ring from staging, no driver call).
            let mask = self.capacity as u64 - 1;
            let staged = self.staging.host_ptr() as *const Task;
            let mut tasks = [Task::zeroed(); LL_SLOTS / 2];
            let n = (end - first) as usize;
            for (i, t) in tasks[..n].iter_mut().enumerate() {
                // SAFETY: in bounds; staged by the caller into its own reserved slots.
                *t = unsafe { staged.add(((first + i as u64) & mask) as usize).read() };
            }
            return self.relay.publish(first, &tasks[..n], &self.transfer);
        }
        // With the relay publishing runs it is the only writer of `tail`: a large
        // batch goes by `publish_run` (host/queue/producer.rs).
        debug_assert!(!self.relay.runs(), "a copy publication beside a relay that publishes runs");
        self.relay.before_copy(first)?;
        let t = size_of::<Task>();
        let s = self.transfer.raw();
        let (dev, host) = (self.ring.ptr(), self.staging.host_ptr());
        self.for_ring_runs(first, end, |slot, count| {
            check(
                unsafe { sys::cuMemcpyHtoDAsync_v2(dev + (slot * t) as u64, host.add(slot * t) as *const c_void, count * t, s) },
                "cuMemcpyHtoDAsync(ring)",
            )
        })?;
        self.publish_tail(end)
    }

    /// Where a host batch's tasks are read in place when the relay publishes runs
    /// (`RuntimeConfig::relay_publish`): the device address of the host ring, the
    /// mapped staging memory, whose slot `i` is task `i` of each lap.
    pub fn host_ring(&self) -> Option<u64> {
        self.relay.runs().then(|| self.staging.device_ptr())
    }

    pub unsafe fn publish_run(&self, first: u64, end: u64, from: u64, entry: usize) -> Result<()> {
        assert!(entry < LIST_RUNS);
        // The caller binds no context for a run (host/queue/producer.rs, `publish`):
        // bound here where a driver call follows. A relayed commit makes one only when
        // it rewrites the slots first (once in 2^30 tasks).
        if self.relay.runs() {
            if self.relay.poison_due(first) {
                self.context().bind()?;
            }
            // SAFETY: the caller's contract is the commit's (backend.rs, publish_run).
            return unsafe { self.relay.commit(first, end, from, entry) };
        }
        self.context().bind()?;
        // The relay must be done with its inline batches before `tail` moves by a copy.
        self.relay.before_copy(first)?;
        let e = size_of::<ListRun>();
        unsafe {
            // The entry's mailbox is free: its last copy ran before its run, which has
            // completed (the producer waited for it).
            let mail = (self.run_mail.host_ptr() as *mut ListRun).add(entry);
            mail.write_volatile(ListRun::new(first as u32, (end - first) as u32, from));
            // One 16-byte copy (the `span` word whole: device/src/lists.rs, step 2),
            // ordered before the copy into `tail` by stream order (step 1).
            check(
                sys::cuMemcpyHtoDAsync_v2(self.lists.ptr() + (entry * e) as u64, mail as *const c_void, e, self.transfer.raw()),
                "cuMemcpyHtoDAsync(list run)",
            )?;
        }
        self.publish_tail(end)
    }

    /// Calls `f(first_slot, count)` for the one or two contiguous runs of ring slots
    /// that `first..end` occupies.
    fn for_ring_runs(&self, first: u64, end: u64, mut f: impl FnMut(usize, usize) -> Result<()>) -> Result<()> {
        let start = (first & (self.capacity as u64 - 1)) as usize;
        let n = (end - first) as usize;
        let n1 = n.min(self.capacity as usize - start);
        f(start, n1)?;
        if n > n1 {
            f(0, n - n1)?;
        }
        Ok(())
    }

    fn tail_ptr(&self) -> u64 {
        self.header.ptr() + std::mem::offset_of!(QueueHeader, tail) as u64
    }

    fn publish_tail(&self, end: u64) -> Result<()> {
        let mask = self.capacity as u64 - 1;
        let s = self.transfer.raw();
        // Relaxed: a hint; either way `tail` is written once, in stream order.
        if self.tail_by_write.load(std::sync::atomic::Ordering::Relaxed) {
            // A stream write after a fence (host/driver/memops.rs): stream order starts it
            // after the copies before it, as the copy below; pairs with the same acquire.
            // A refusal comes back at once with nothing enqueued: then the copy below,
            // from now on.
            if memops::write_tail(s, self.tail_ptr(), end as u32).is_ok() {
                return Ok(());
            }
            self.tail_by_write.store(false, std::sync::atomic::Ordering::Relaxed);
        }
        unsafe {
            // Publication: a 4-byte copy of `end` into `tail`. Stream order starts it
            // only after the slot copies above have completed, so the slots' bytes are
            // in device memory before `tail` changes; it pairs with the workers'
            // ld.acquire.sys of `tail` (device/src/queue.rs, step 2), whose acquire
            // also drops stale L1 copies of the slots.
            let mailbox = (self.tails.host_ptr() as *mut u32).add(((end - 1) & mask) as usize);
            mailbox.write_volatile(end as u32);
            check(sys::cuMemcpyHtoDAsync_v2(self.tail_ptr(), mailbox as *const c_void, 4, s), "cuMemcpyHtoDAsync(tail)")
        }
    }

    pub fn completion(&self, seq: u64) -> *const Completion {
        let i = (seq & (self.capacity as u64 - 1)) as usize;
        unsafe { (self.completions.host_ptr() as *const Completion).add(i) }
    }

    pub fn segment_done(&self, first: u64) -> *const SegmentDone {
        let i = (first & (self.capacity as u64 - 1)) as usize;
        unsafe { (self.segment_done.host_ptr() as *const SegmentDone).add(i) }
    }

    /// Address of device counter `id`.
    pub fn counter_addr(&self, id: usize) -> u64 {
        assert!(id < COUNTER_TABLE_WORDS);
        self.counters.ptr() + (id * size_of::<u32>()) as u64
    }

    pub fn alloc(&self, bytes: usize) -> Result<Memory> {
        self.ctx.bind()?;
        let Some(arena) = &self.arena else {
            return Ok(Memory::Cuda(unsafe { DeviceAlloc::zeroed(&self.ctx, bytes, self.transfer.raw()) }?));
        };
        let block = arena.take(bytes)?;
        let s = self.transfer.raw();
        // SAFETY: the block is this buffer's alone (at least `bytes`, 256-byte aligned,
        // inside the live arena); zeroed and waited for before anyone sees its address.
        check(unsafe { sys::cuMemsetD8Async(block.ptr(), 0, bytes.max(1), s) }, "cuMemsetD8Async")?;
        check(unsafe { sys::cuStreamSynchronize(s) }, "cuStreamSynchronize")?;
        Ok(Memory::CudaArena(block))
    }

    pub unsafe fn upload(&self, dst: u64, src: &[u8], _elem: usize) -> Result<()> {
        self.ctx.bind()?;
        // On the legacy stream, which non-blocking streams (the kernel's among them) do
        // not wait for. From pageable memory `cuMemcpyHtoD` returns once the data is in
        // the driver's staging buffer, before the DMA to `dst` has landed (CUDA's API
        // sync behaviour notes): a kernel on a non-blocking stream then read stale
        // values (a baseline's axpy after `Buffer::write`, H100 2026-11-25). Waiting
        // for the legacy stream makes the copy complete when this returns, so before
        // any later publication that a worker can see.
        check(unsafe { sys::cuMemcpyHtoD_v2(dst, src.as_ptr() as *const c_void, src.len()) }, "cuMemcpyHtoD")?;
        check(unsafe { sys::cuStreamSynchronize(std::ptr::null_mut()) }, "cuStreamSynchronize(legacy)")
    }

    pub unsafe fn download(&self, src: u64, dst: &mut [u8], _elem: usize) -> Result<()> {
        self.ctx.bind()?;
        check(unsafe { sys::cuMemcpyDtoH_v2(dst.as_mut_ptr() as *mut c_void, src, dst.len()) }, "cuMemcpyDtoH")
    }

    /// Copies `bytes` from `src` in `src_ctx` (another device's, or this one's) to `dst`
    /// here (`cuMemcpyPeer`: the driver's device-to-device path; direct over NVLink or
    /// PCIe once peer access is enabled between the contexts, which the runtime does
    /// not do itself, else staged by the driver), complete when this returns (both
    /// contexts' legacy streams are synchronized: neither waits for a persistent
    /// kernel, which runs on a non-blocking stream). Leaves this context current.
    ///
    /// # Safety
    /// `dst..dst+bytes` must lie in this backend's memory and `src..src+bytes` in live
    /// memory of `src_ctx`.
    pub unsafe fn copy_peer(&self, dst: u64, src_ctx: &Context, src: u64, bytes: usize) -> Result<()> {
        self.ctx.bind()?;
        check(unsafe { sys::cuMemcpyPeer(dst, self.ctx.raw(), src, src_ctx.raw(), bytes) }, "cuMemcpyPeer")?;
        check(unsafe { sys::cuStreamSynchronize(std::ptr::null_mut()) }, "cuStreamSynchronize(legacy)")?;
        src_ctx.bind()?;
        check(unsafe { sys::cuStreamSynchronize(std::ptr::null_mut()) }, "cuStreamSynchronize(legacy)")?;
        self.ctx.bind()
    }

    pub fn set_buffer_entry(&self, index: usize, e: BufferEntry) -> Result<()> {
        assert!(index < MAX_BUFFERS);
        let dst = self.table.ptr() + (index * size_of::<BufferEntry>()) as u64;
        // Complete before this returns, so before the tail write of any later
        // publication; the workers' acquire of that tail orders their table reads.
        unsafe { self.upload(dst, bytemuck::bytes_of(&e), 8) }
    }

    /// A new link's outbox of `bytes`, zeroed, in mapped pinned memory (cached: the
    /// forwarder reads it): its index in the link table, its host address, and the
    /// address this device's warps push to.
    pub fn new_outbox(&self, bytes: usize) -> Result<(usize, *mut u8, u64)> {
        let mut v = self.outboxes.lock().unwrap_or_else(|e| e.into_inner());
        if v.len() >= resident_shared::link::MAX_LINKS {
            return Err(Error::TooManyLinks(resident_shared::link::MAX_LINKS));
        }
        // SAFETY: fresh memory; the link protocol orders its uses (resident_device::link).
        let m = unsafe { PinnedAlloc::zeroed(&self.ctx, bytes, false) }?;
        let (h, d) = (m.host_ptr(), m.device_ptr());
        v.push(m);
        Ok((v.len() - 1, h, d))
    }

    /// Link `index`'s `enqueue` counter: positions handed out to pushes so far (a
    /// synchronous 4-byte copy; the workers' atomics may move it meanwhile).
    pub fn link_enqueued(&self, index: usize) -> Result<u32> {
        assert!(index < resident_shared::link::MAX_LINKS);
        let src = self.table.ptr() + (resident_shared::link::ENQUEUE_OFFSET + index * resident_shared::link::ENQUEUE_STRIDE) as u64;
        let mut w = [0u8; 4];
        // SAFETY: 4 bytes of the live table allocation.
        unsafe { self.download(src, &mut w, 4) }?;
        Ok(u32::from_ne_bytes(w))
    }

    /// Writes link-table entry `index` with a synchronous copy (it has landed when
    /// this returns: before the link's id is handed out, so before any task naming it
    /// is published). `keep_outbox`: only the word with the generation (a dropped link
    /// keeps its address: a torn read by a racing push sees the right address).
    pub fn set_link_entry(&self, index: usize, e: resident_shared::link::LinkEntry, keep_outbox: bool) -> Result<()> {
        assert!(index < resident_shared::link::MAX_LINKS);
        let dst = self.table.ptr() + (resident_shared::link::TABLE_OFFSET + index * size_of::<resident_shared::link::LinkEntry>()) as u64;
        let bytes = bytemuck::bytes_of(&e);
        // SAFETY: 16 (or the last 8) bytes of the live link table.
        if keep_outbox { unsafe { self.upload(dst + 8, &bytes[8..], 8) } } else { unsafe { self.upload(dst, bytes, 8) } }
    }

    pub fn cancel_segment(&self, first: u64) -> Result<()> {
        let i = first & (self.capacity as u64 - 1);
        let word = self.segment_counts.ptr() + i * size_of::<SegmentCount>() as u64 + std::mem::offset_of!(SegmentCount, cancel) as u64;
        // SAFETY: 4 bytes of the live counts array. The segment's tasks poll the word
        // with ld.relaxed.sys (`TaskCx::cancelled`); a synchronous copy on the legacy
        // stream, which the kernel's non-blocking stream does not wait for.
        unsafe { self.upload(word, &resident_shared::stamp_for(first as u32).to_ne_bytes(), 4) }
    }

    pub fn health(&self) -> Health {
        if let StreamState::Failed(e) = self.relay.state() {
            return Health::Fault(Error::DeviceFault(e.to_string()));
        }
        match self.kernel_stream.state() {
            // Kernels that left an idle queue on purpose (or are leaving, or coming back
            // while this looks: the state's generation) are not a dead runtime.
            StreamState::Idle if !self.park.dead(|| matches!(self.kernel_stream.state(), StreamState::Idle)) => Health::Running,
            StreamState::Busy => Health::Running,
            StreamState::Idle => Health::Exited,
            StreamState::Failed(e) => Health::Fault(Error::DeviceFault(e.to_string())),
        }
    }

    pub fn abort(&self) -> Result<()> {
        self.ctx.bind()?;
        let abort = self.header.ptr() + std::mem::offset_of!(QueueHeader, abort) as u64;
        // First through the relay's mailbox (host memory the relay polls): it needs no
        // work beside the resident kernels, so it lands under compute-sanitizer too,
        // where the memset below did not while they ran.
        self.relay.ask_abort();
        // A memset on its own stream, so it never waits behind the transfer stream.
        // Pairs with the workers' ld.acquire.sys of `abort`.
        check(unsafe { sys::cuMemsetD32Async(abort, 1, 1, self.control.raw()) }, "cuMemsetD32Async(abort)")?;
        self.control.synchronize()
    }

    /// See `Backend::park`.
    pub fn park(&self, next: u64, runs: u64) -> Result<bool> {
        self.park.park(
            || self.abort(),
            |limit| self.wait_exit(Some(limit)),
            || {
                // Kernels that ended by a fault are no exit.
                if let StreamState::Failed(e) = self.kernel_stream.state() {
                    return Err(e);
                }
                self.reset_queue(next, runs)?;
                *self.resume.lock().unwrap_or_else(|e| e.into_inner()) = (next, runs);
                Ok(())
            },
        )
    }

    /// With no kernel running: the header and the mailbox as the next launch needs them
    /// (docs/protocol.md, E4). `head = tail = next`: claims made past `tail` were never
    /// run; `abort`, `stop`, `exited` zero.
    fn reset_queue(&self, next: u64, runs: u64) -> Result<()> {
        let mut h = QueueHeader::ZERO;
        h.head.value = next as u32;
        h.tail.value = next as u32;
        // SAFETY: the live header, whole; a synchronous copy (it has landed when this
        // returns: `upload`), before the relaunch that reads it.
        unsafe { self.upload(self.header.ptr(), bytemuck::bytes_of(&h), 4) }?;
        self.relay.resume(next, runs);
        Ok(())
    }

    /// See `Backend::unpark`.
    pub fn unpark(&self) -> Result<()> {
        if self.park.get() != PARKED {
            return Ok(());
        }
        self.ctx.bind()?;
        // SAFETY: parked: no kernel runs, and `park` reset the queue.
        if let Err(e) = unsafe { self.launch(true) } {
            // One kernel may have started without the other: stop it, and reset the
            // queue again (a worker may have claimed past `next`). Stay parked.
            let _ = self.abort();
            if !self.wait_exit(Some(crate::backend::park::EXIT_WAIT)) {
                return Err(e);
            }
            let (next, runs) = *self.resume.lock().unwrap_or_else(|e| e.into_inner());
            self.reset_queue(next, runs)?;
            return Err(e);
        }
        self.park.set(RUNNING);
        Ok(())
    }

    pub fn is_parked(&self) -> bool {
        self.park.get() == PARKED
    }

    /// Both kernels ended, normally or by a fault (a faulted context runs nothing).
    pub fn workers_gone(&self) -> bool {
        !matches!(self.kernel_stream.state(), StreamState::Busy) && !matches!(self.relay.state(), StreamState::Busy)
    }

    pub fn wait_exit(&self, timeout: Option<Duration>) -> bool {
        let deadline = timeout.and_then(crate::util::deadline::after);
        loop {
            // Both kernels: the relay leaves on the same signals as the workers.
            let state = match self.kernel_stream.state() {
                StreamState::Idle => self.relay.state(),
                s => s,
            };
            match state {
                StreamState::Busy if !crate::util::deadline::passed(deadline) => std::thread::sleep(Duration::from_micros(100)),
                StreamState::Busy => return false,
                _ => {
                    // Both ended: pinned frees need not wait for them.
                    self.resident.lock().unwrap_or_else(|e| e.into_inner()).take();
                    return true;
                }
            }
        }
    }

    /// What the stream API's handle on this device is made of (`Runtime::device`): the
    /// context, the built-in kernels, and the claim on the device, which the handle
    /// holds while it lives.
    pub(crate) fn stream_parts(&self) -> (Context, Arc<Module>, Arc<RuntimeClaim>) {
        (self.ctx.clone(), self.kernels.clone(), self._claim.clone())
    }

    /// The image's module (`Runtime::module`).
    pub(crate) fn module(&self) -> &Arc<Module> {
        &self.module
    }

    pub(crate) fn table_ptr(&self) -> u64 {
        self.table.ptr()
    }

    /// The stream the user lent for transfers, if any (its owner, as lent).
    pub(crate) fn lent_transfer(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        self.transfer.lent_owner()
    }

    /// Enqueues on `stream` a one-thread kernel that waits until the batch `first..first
    /// + len` (cut into `segment`-task segments) has completed.
    pub(crate) fn launch_wait_ticket(&self, stream: sys::CUstream, first: u64, len: u64, segment: u32) -> Result<()> {
        let p = resident_device::kernels::wait_ticket::WaitTicketParams {
            segment_done: self.segment_done.device_ptr(),
            header: self.header.ptr(),
            first: first as u32,
            len: u32::try_from(len).map_err(|_| Error::BatchTooLarge(len as usize))?,
            segment,
            mask: self.capacity - 1,
        };
        self.ctx.bind()?;
        // SAFETY: the kernel takes one `WaitTicketParams`, naming this backend's segment
        // records and header, which outlive the runtime's kernels.
        unsafe { launch_1d(self.wait_ticket, stream, 1, 1, 0, &p, "cuLaunchKernel(resident_wait_ticket)") }
    }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        // The fields' destructors call the driver: make the context current on this
        // thread first. The runtime drops a backend only after its kernel has exited.
        let _ = self.ctx.bind();
    }
}
