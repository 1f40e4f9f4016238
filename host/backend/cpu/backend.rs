//! Queue memory in host RAM and the worker threads that drain it.

use resident_shared::lists::{LIST_RUNS, ListRun};
use resident_shared::{
    BufferEntry, COUNTER_TABLE_WORDS, Completion, KernelParams, MAX_BUFFERS, QueueHeader, SegmentCount, SegmentDone, Task,
};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::HostAlloc;
use crate::backend::info::{BackendInfo, Health, Memory};
use crate::backend::kind::BackendKind;
use crate::backend::park::{PARKED, PARKING, RUNNING};
use crate::backend::placement::Placement;
use crate::backend::settings::Settings;
use crate::{Error, Result};

pub(crate) struct CpuBackend {
    ring: HostAlloc,
    header: HostAlloc,
    completions: HostAlloc,
    segment_counts: HostAlloc,
    segment_done: HostAlloc,
    counters: HostAlloc,
    table: HostAlloc,
    /// The table of list runs (`resident_shared::lists`).
    lists: HostAlloc,
    /// Owned here so that it outlives the workers; only they use it.
    _spawn: HostAlloc,
    /// The links' outboxes (host/multi/link.rs), in link-table order: they live as long as
    /// the workers may push into them.
    outboxes: Mutex<Vec<HostAlloc>>,
    capacity: u32,
    workers: Mutex<Vec<JoinHandle<()>>>,
    /// Workers started (and not yet all joined after an idle exit).
    n_workers: AtomicUsize,
    exited: Arc<AtomicUsize>,
    /// What each worker runs: the set's loop over these parameters, with this much
    /// scratch (kept for relaunches after an idle exit).
    params: KernelParams,
    run_loop: unsafe fn(&KernelParams),
    scratch: u32,
    /// Elastic residency: [`RUNNING`], [`PARKING`] or [`PARKED`] (host/runtime/residency.rs).
    park: crate::backend::park::ParkState,
    /// Where the last exit left the queue (`next`): a failed restart resets it there.
    resume: AtomicU64,
    /// Worker starts so far, and the test hook `RuntimeConfig::fail_worker_start`.
    starts: AtomicUsize,
    fail_worker_start: Option<usize>,
    fault: Arc<Mutex<Option<String>>>,
}

impl CpuBackend {
    pub fn new(config: &Settings) -> Result<Self> {
        let capacity = config.capacity;
        let ring = HostAlloc::zeroed(capacity as usize * size_of::<Task>())?;
        let header = HostAlloc::zeroed(size_of::<QueueHeader>())?;
        let completions = HostAlloc::zeroed(capacity as usize * size_of::<Completion>())?;
        let segment_counts = HostAlloc::zeroed(capacity as usize * size_of::<SegmentCount>())?;
        let segment_done = HostAlloc::zeroed(capacity as usize * size_of::<SegmentDone>())?;
        // SAFETY: both hold `capacity` records, and no worker runs yet.
        unsafe {
            crate::backend::records::spend_records(completions.ptr() as *mut Completion, segment_done.ptr() as *mut SegmentDone, capacity)
        };
        let counters = HostAlloc::zeroed(COUNTER_TABLE_WORDS * size_of::<u32>())?;
        // The buffer table, then the link table and the links' `enqueue` counters
        // (`resident_shared::link`).
        let table = HostAlloc::zeroed(resident_shared::link::TABLES_BYTES)?;
        let lists = HostAlloc::zeroed(LIST_RUNS * size_of::<ListRun>())?;
        let n_workers = match config.cpu_workers {
            0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
            n => n,
        };
        let spawn = HostAlloc::zeroed(resident_shared::spawn::bytes(config.spawn_capacity, n_workers as u32))?;
        let params = KernelParams {
            ring: ring.ptr() as u64,
            header: header.ptr() as u64,
            completions: completions.ptr() as u64,
            segment_counts: segment_counts.ptr() as u64,
            segment_done: segment_done.ptr() as u64,
            buffers: table.ptr() as u64,
            counters: counters.ptr() as u64,
            capacity,
            // A CPU "warp" has one lane.
            claim: 1,
            // No relay on the CPU: publishing is one store already.
            flags: config.worker_flags,
            max_sleep_ns: config.max_poll_sleep_ns,
            spawn: spawn.ptr() as u64,
            spawn_capacity: config.spawn_capacity,
            workers: n_workers as u32,
            relay: 0,
            lists: lists.ptr() as u64,
            // The CPU backend's loop times nothing (`resident_device_timing` is a
            // device build's).
            steps: 0,
        };
        let run_loop = config.code.cpu_loop;
        let scratch = config.code.scratch_bytes_per_warp;
        let exited = Arc::new(AtomicUsize::new(0));
        let fault = Arc::new(Mutex::new(None));
        // The backend owns the memory before any worker starts: if a start fails, its
        // drop stops and joins the workers started so far before it frees anything.
        let this = Self {
            ring,
            header,
            completions,
            segment_counts,
            segment_done,
            counters,
            table,
            lists,
            _spawn: spawn,
            outboxes: Mutex::new(Vec::new()),
            capacity,
            workers: Mutex::new(Vec::with_capacity(n_workers)),
            n_workers: AtomicUsize::new(0),
            exited,
            fault,
            params,
            run_loop,
            scratch,
            park: crate::backend::park::ParkState::new(),
            resume: AtomicU64::new(0),
            starts: AtomicUsize::new(0),
            fail_worker_start: config.fail_worker_start,
        };
        this.start_workers(n_workers)?;
        Ok(this)
    }

    /// Starts `n_workers` worker threads over the queue (`fail_at`: the test hook that
    /// refuses one). On a failure the workers started so far keep running: the caller
    /// aborts and joins them (the backend's drop, or `unpark`).
    fn start_workers(&self, n_workers: usize) -> Result<()> {
        let (params, run_loop, scratch) = (self.params, self.run_loop, self.scratch);
        let abort_addr = self.header.ptr() as usize + std::mem::offset_of!(QueueHeader, abort);
        for i in 0..n_workers {
            let (exited, fault) = (self.exited.clone(), self.fault.clone());
            // The test hook counts every start over the pool's life, relaunches too.
            let refused = self.fail_worker_start == Some(self.starts.fetch_add(1, Ordering::Relaxed));
            let started = if refused {
                Err(std::io::Error::other("refused by the fail_worker_start test hook"))
            } else {
                std::thread::Builder::new().name(format!("resident-worker-{i}")).spawn(move || {
                    resident_device::arch::set_worker(i as u32, n_workers as u32);
                    resident_device::arch::set_smem_bytes(scratch);
                    // SAFETY: the queue memory outlives the workers: the backend joins
                    // them (or leaks the memory) before dropping it.
                    let r = std::panic::catch_unwind(|| unsafe { run_loop(&params) });
                    if let Err(e) = r {
                        // A task that traps (or panics) is the CPU's device fault: as on a
                        // GPU, where the whole kernel dies, every worker must go. Recorded
                        // first, so that the health poll that sees them gone sees why, and
                        // so that every task the abort below ends (`spin`, counter and
                        // link waits: `Status::Aborted`) is ordered after the record:
                        //   this insert (released by the unlock)
                        //   -> the release store of `abort` below
                        //   -> another worker's acquire load of it (`TaskCx::aborting`)
                        //   -> that worker's record of the task (fence + stamp store)
                        //   -> the host's acquire load of the stamp (completions.rs)
                        //   -> `TicketState::finish` (release) -> a waiter's `is_done`
                        //   -> `Ticket::outcome` -> `CpuBackend::fault` (this lock).
                        // So whoever reads an `Aborted` that this abort caused finds the
                        // fault here (`Shared::fault_now`), and names it instead.
                        // (Poison-tolerant: this thread is already unwinding a panic.)
                        let msg = e.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| e.downcast_ref::<String>().cloned());
                        fault.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(msg.unwrap_or_else(|| "worker panicked".into()));
                        // Release: pairs with the other workers' acquire load of `abort`
                        // (the chain above).
                        // SAFETY: the header outlives the workers (see above).
                        unsafe { AtomicU32::from_ptr(abort_addr as *mut u32) }.store(1, Ordering::Release);
                    }
                    exited.fetch_add(1, Ordering::AcqRel);
                })
            };
            match started {
                Ok(h) => {
                    self.workers.lock().unwrap().push(h);
                    self.n_workers.fetch_add(1, Ordering::AcqRel);
                }
                // Dropping the backend aborts and joins the `i` workers started so far.
                Err(e) => return Err(Error::Config(format!("cannot start CPU worker thread {i} of {n_workers}: {e}"))),
            }
        }
        Ok(())
    }

    pub fn info(&self) -> BackendInfo {
        BackendInfo {
            kind: BackendKind::Cpu,
            name: "CPU".into(),
            workers: self.n_workers() as u32,
            layout: format!("{} worker threads", self.n_workers()),
            device: 0,
            capacity: self.capacity() as usize,
            fallback: None,
        }
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The buffer table's address: `resident_one_task`'s `buffers` (`Runtime::one_task_params`).
    pub fn table_ptr(&self) -> u64 {
        self.table.ptr() as u64
    }

    fn n_workers(&self) -> usize {
        self.n_workers.load(Ordering::Acquire)
    }

    fn header(&self) -> *mut QueueHeader {
        self.header.ptr() as *mut QueueHeader
    }

    pub unsafe fn stage(&self, first: u64, tasks: &[Task], place: Placement) {
        let ring = self.ring.ptr() as *mut Task;
        let mask = self.capacity as u64 - 1;
        for (i, t) in tasks.iter().enumerate() {
            // SAFETY: index < capacity; the slot is free (caller's contract), so no
            // worker reads it until the release store of `tail` in `publish`.
            unsafe { ring.add(((first + i as u64) & mask) as usize).write(place.apply(i, t)) };
        }
    }

    pub fn publish(&self, _first: u64, end: u64) -> Result<()> {
        // Release: publishes the slot writes in `stage` to the workers' acquire load of
        // `tail` (device/src/queue.rs, step 2).
        unsafe { AtomicU32::from_ptr(&raw mut (*self.header()).tail.value) }.store(end as u32, Ordering::Release);
        Ok(())
    }

    pub unsafe fn publish_run(&self, first: u64, end: u64, from: u64, entry: usize) -> Result<()> {
        assert!(entry < LIST_RUNS);
        let run = ListRun::new(first as u32, (end - first) as u32, from);
        let e = unsafe { (self.lists.ptr() as *mut ListRun).add(entry) };
        // Relaxed atomic stores (workers may be reading the entry: device/src/lists.rs,
        // step 2), `span` in one 8-byte store; published by the release store of `tail`.
        unsafe {
            AtomicU64::from_ptr(&raw mut (*e).addr).store(run.addr, Ordering::Relaxed);
            AtomicU64::from_ptr(&raw mut (*e).span).store(run.span, Ordering::Relaxed);
        }
        self.publish(first, end)
    }

    pub fn completion(&self, seq: u64) -> *const Completion {
        let i = (seq & (self.capacity as u64 - 1)) as usize;
        unsafe { (self.completions.ptr() as *const Completion).add(i) }
    }

    pub fn segment_done(&self, first: u64) -> *const SegmentDone {
        let i = (first & (self.capacity as u64 - 1)) as usize;
        unsafe { (self.segment_done.ptr() as *const SegmentDone).add(i) }
    }

    pub fn counter_addr(&self, id: usize) -> u64 {
        assert!(id < COUNTER_TABLE_WORDS);
        self.counters.ptr() as u64 + (id * size_of::<u32>()) as u64
    }

    pub fn alloc(&self, bytes: usize) -> Result<Memory> {
        Ok(Memory::Cpu(HostAlloc::zeroed(bytes)?))
    }

    pub unsafe fn upload(&self, dst: u64, src: &[u8], elem: usize) -> Result<()> {
        // SAFETY: the caller's range; workers access it only through `racy` or
        // element-wide atomics (tasks' views).
        unsafe { resident_device::arch::racy::store(dst as *mut u8, src, elem) };
        Ok(())
    }

    pub unsafe fn download(&self, src: u64, dst: &mut [u8], elem: usize) -> Result<()> {
        // SAFETY: as in `upload`.
        unsafe { resident_device::arch::racy::load(dst, src as *const u8, elem) };
        Ok(())
    }

    pub fn set_buffer_entry(&self, index: usize, e: BufferEntry) -> Result<()> {
        assert!(index < MAX_BUFFERS);
        // Ordered before any later publication by the registries' lock (a producer
        // validates a task naming it only after this) and the release store of `tail`
        // (the device reads entries after its acquire of `tail`). Relaxed atomic
        // stores, as the workers' loads are (`arch::ld_weak_v2_u64`): a forged or stale
        // handle's task may read the entry while it changes, which gives it a torn
        // entry that fails its check, never undefined behaviour.
        let words: [u64; 2] = bytemuck::cast(e);
        let at = unsafe { (self.table.ptr() as *mut BufferEntry).add(index) } as *mut u64;
        for (k, w) in words.into_iter().enumerate() {
            // SAFETY: in the table (index checked), 16-byte aligned entries.
            unsafe { AtomicU64::from_ptr(at.add(k)) }.store(w, Ordering::Relaxed);
        }
        Ok(())
    }

    /// A new link's outbox of `bytes`, zeroed: its index in the link table, and its
    /// address (the same for the host and the workers here).
    pub fn new_outbox(&self, bytes: usize) -> Result<(usize, *mut u8, u64)> {
        let mut v = self.outboxes.lock().unwrap_or_else(|e| e.into_inner());
        if v.len() >= resident_shared::link::MAX_LINKS {
            return Err(Error::TooManyLinks(resident_shared::link::MAX_LINKS));
        }
        let m = HostAlloc::zeroed(bytes)?;
        let p = m.ptr();
        v.push(m);
        Ok((v.len() - 1, p, p as u64))
    }

    /// Link `index`'s `enqueue` counter: positions handed out to pushes so far.
    pub fn link_enqueued(&self, index: usize) -> Result<u32> {
        assert!(index < resident_shared::link::MAX_LINKS);
        let at = unsafe { self.table.ptr().add(resident_shared::link::ENQUEUE_OFFSET + index * resident_shared::link::ENQUEUE_STRIDE) }
            as *mut u32;
        // SAFETY: the counter's word in the table allocation; the workers update it
        // atomically.
        Ok(unsafe { std::sync::atomic::AtomicU32::from_ptr(at) }.load(Ordering::Acquire))
    }

    /// Writes link-table entry `index` (`resident_device::link`, L1): the address
    /// first, then the word with the generation, release (a forged id racing it reads
    /// a null address or the right one; the device's check refuses the first).
    /// `keep_outbox`: only the generation word (a dropped link keeps its address).
    pub fn set_link_entry(&self, index: usize, e: resident_shared::link::LinkEntry, keep_outbox: bool) -> Result<()> {
        assert!(index < resident_shared::link::MAX_LINKS);
        let words: [u64; 2] = bytemuck::cast(e);
        let at = unsafe { self.table.ptr().add(resident_shared::link::TABLE_OFFSET) as *mut u64 }.wrapping_add(2 * index);
        // SAFETY: in the link table (index checked), 16-byte aligned entries.
        if !keep_outbox {
            unsafe { AtomicU64::from_ptr(at) }.store(words[0], Ordering::Relaxed);
        }
        unsafe { AtomicU64::from_ptr(at.add(1)) }.store(words[1], Ordering::Release);
        Ok(())
    }

    pub fn cancel_segment(&self, first: u64) -> Result<()> {
        let i = (first & (self.capacity as u64 - 1)) as usize;
        // SAFETY: an entry of the live counts array. Relaxed: a flag the segment's
        // tasks poll (`TaskCx::cancelled`); it orders nothing.
        unsafe {
            let c = (self.segment_counts.ptr() as *mut SegmentCount).add(i);
            AtomicU32::from_ptr(&raw mut (*c).cancel).store(resident_shared::stamp_for(first as u32), Ordering::Relaxed);
        }
        Ok(())
    }

    /// The fault a worker recorded (a task that panicked or trapped), if any. Recorded
    /// before that worker raised `abort` (`start_workers`): a caller ordered after a
    /// task that this abort ended (it read the task's record) sees it.
    pub fn fault(&self) -> Option<Error> {
        self.fault.lock().unwrap_or_else(|p| p.into_inner()).clone().map(Error::DeviceFault)
    }

    pub fn health(&self) -> Health {
        if let Some(e) = self.fault() {
            return Health::Fault(e);
        }
        // Workers that left an idle queue on purpose (or are leaving, or coming back
        // while this looks) are not a dead runtime.
        if self.park.dead(|| self.exited.load(Ordering::Acquire) == self.n_workers()) { Health::Exited } else { Health::Running }
    }

    /// See `Backend::park`.
    pub fn park(&self, next: u64, _runs: u64) -> Result<bool> {
        self.park.park(
            || self.abort(),
            |limit| self.wait_exit(Some(limit)),
            || {
                self.reset_queue(next);
                self.resume.store(next, Ordering::Release);
                Ok(())
            },
        )
    }

    /// With no worker running: the header as the next start needs it (docs/protocol.md,
    /// E4). `head = tail = next`: claims made past `tail` were never run.
    fn reset_queue(&self, next: u64) {
        let h = self.header();
        // SAFETY: the live header; no worker runs (joined by the caller). The next
        // workers start after these stores (the thread spawn orders them).
        unsafe {
            (*h).head.value = next as u32;
            (*h).tail.value = next as u32;
            (*h).stop.value = 0;
            (*h).exited.value = 0;
            AtomicU32::from_ptr(&raw mut (*h).abort.value).store(0, Ordering::Release);
        }
        self.exited.store(0, Ordering::Release);
    }

    /// See `Backend::unpark`.
    pub fn unpark(&self) -> Result<()> {
        if self.park.get() != PARKED {
            return Ok(());
        }
        let n = self.n_workers();
        // The pool starts again from nothing (the thread spawns order the header's reset
        // before the workers' reads). The caller holds the producer lock, so no other
        // thread parks or unparks meanwhile. Not parked while threads start: a failed
        // start must really wait for those that did (`wait_exit`, `workers_gone`).
        self.park.set(PARKING);
        self.n_workers.store(0, Ordering::Release);
        if let Err(e) = self.start_workers(n) {
            // Stop and join those that started, then reset the queue again (one may
            // have claimed past `next`); parked again. Workers that would not leave
            // keep the pool unparked (and its memory, at drop).
            let _ = self.abort();
            if !self.wait_exit(Some(crate::backend::park::EXIT_WAIT)) {
                return Err(e);
            }
            self.reset_queue(self.resume.load(Ordering::Acquire));
            self.n_workers.store(n, Ordering::Release);
            self.park.set(PARKED);
            return Err(e);
        }
        self.park.set(RUNNING);
        Ok(())
    }

    pub fn is_parked(&self) -> bool {
        self.park.get() == PARKED
    }

    pub fn workers_gone(&self) -> bool {
        // Parked: joined, and `exited` reset for the next start.
        self.is_parked() || self.exited.load(Ordering::Acquire) == self.n_workers()
    }

    pub fn abort(&self) -> Result<()> {
        // Release, pairs with the workers' acquire load of `abort`.
        unsafe { AtomicU32::from_ptr(&raw mut (*self.header()).abort.value) }.store(1, Ordering::Release);
        Ok(())
    }

    pub fn wait_exit(&self, timeout: Option<Duration>) -> bool {
        if self.is_parked() {
            // Every worker was joined when the pool parked (a drop after a failed
            // relaunch finds it so).
            return true;
        }
        let deadline = timeout.and_then(crate::util::deadline::after);
        while self.exited.load(Ordering::Acquire) < self.n_workers() {
            if crate::util::deadline::passed(deadline) {
                return false;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        for h in self.workers.lock().unwrap().drain(..) {
            let _ = h.join();
        }
        true
    }
}

impl Drop for CpuBackend {
    fn drop(&mut self) {
        // The runtime stops the workers before dropping the backend; if they are still
        // running (a task that never returns), the queue memory must outlive them.
        if !self.workers_gone() {
            let _ = self.abort();
            if !self.wait_exit(Some(Duration::from_secs(1))) {
                crate::util::report::report!(error, "CPU workers did not stop; leaking the queue memory");
                for m in [
                    &mut self.ring,
                    &mut self.header,
                    &mut self.completions,
                    &mut self.segment_counts,
                    &mut self.segment_done,
                    &mut self.counters,
                    &mut self.table,
                    &mut self.lists,
                    &mut self._spawn,
                ] {
                    m.leak();
                }
                for m in self.outboxes.get_mut().unwrap_or_else(|e| e.into_inner()).iter_mut() {
                    m.leak();
                }
            }
        }
    }
}
