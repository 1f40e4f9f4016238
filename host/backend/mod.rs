//! The two places tasks can run, behind one enum: the persistent kernel on a CUDA
//! device, or worker threads on the host running the same device code. Both present the
//! same queue memory (ring, header, completion records, segment counts and records,
//! counters, buffer table); they differ only in
//! how staged slots and the `tail` counter reach the workers, and in how memory is
//! allocated and copied.

pub(crate) mod cpu;
pub(crate) mod cuda;
pub(crate) mod info;
pub(crate) mod kind;
pub(crate) mod park;
pub(crate) mod placement;
pub(crate) mod records;
pub(crate) mod settings;

use resident_shared::{BufferEntry, Completion, SegmentDone, Task};
use std::time::Duration;

use crate::Result;
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::backend::CudaBackend;
pub use crate::backend::info::BackendInfo;
pub(crate) use crate::backend::info::{Health, Memory};
use crate::backend::placement::Placement;

// One per runtime: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Backend {
    Cuda(CudaBackend),
    Cpu(CpuBackend),
}

macro_rules! each {
    ($self:ident, $b:ident => $e:expr) => {
        match $self {
            Backend::Cuda($b) => $e,
            Backend::Cpu($b) => $e,
        }
    };
}

impl Backend {
    pub fn info(&self) -> BackendInfo {
        each!(self, b => b.info())
    }
    pub fn capacity(&self) -> u32 {
        each!(self, b => b.capacity())
    }
    /// Writes `tasks` into the slots `first..` (mod capacity), where the workers (CPU)
    /// or the next copy (CUDA) will find them.
    ///
    /// # Safety
    /// The slots must be free: every earlier task in them has completed, and they are
    /// the caller's alone (reserved for its batch, each slot staged by one thread).
    pub unsafe fn stage(&self, first: u64, tasks: &[Task], place: Placement) {
        each!(self, b => unsafe { b.stage(first, tasks, place) })
    }
    /// Stages a run over the host ring ([`Backend::host_ring`]): in the compact form
    /// where every task has it and the configuration allows it; returns whether it
    /// did, which the run's commit must say (`lists::COMPACT` in its address).
    ///
    /// # Safety
    /// As for [`Backend::stage`]; the run must not cross the ring's end.
    pub unsafe fn stage_run(&self, first: u64, tasks: &[Task], place: Placement) -> bool {
        match self {
            Backend::Cuda(b) => unsafe { b.stage_run(first, tasks, place) },
            Backend::Cpu(b) => {
                unsafe { b.stage(first, tasks, place) };
                false
            }
        }
    }
    /// Makes the staged slots `first..end` visible to the workers: `tail = end`.
    pub fn publish(&self, first: u64, end: u64) -> Result<()> {
        each!(self, b => b.publish(first, end))
    }
    /// Publishes the slots `first..end` as a list run (`device/src/lists.rs`): table
    /// entry `entry` says that their tasks lie at `from` in backend memory, where the
    /// workers read them in place; then `tail = end`. The resident-list path: no
    /// staging, no copy of the tasks.
    ///
    /// # Safety
    /// As for [`Backend::stage`]; the entry must be free (its last run completed);
    /// `from` must hold `end - first` placed tasks in memory from [`Backend::alloc`]
    /// that stays live until they have completed.
    pub unsafe fn publish_run(&self, first: u64, end: u64, from: u64, entry: usize) -> Result<()> {
        each!(self, b => unsafe { b.publish_run(first, end, from, entry) })
    }
    /// Where the workers read a host batch in place, if they do (the CUDA backend with
    /// the relay publishing runs): the device address of the slot-0 task of the host
    /// ring, which [`Backend::stage`] writes. Host batches are then published as list
    /// runs over the ring ([`Backend::publish_run`]), not copied.
    pub fn host_ring(&self) -> Option<u64> {
        match self {
            Backend::Cuda(b) => b.host_ring(),
            Backend::Cpu(_) => None,
        }
    }
    /// Whether a batch of `n` tasks goes inline through the relay (CUDA; small batches).
    pub fn inline(&self, n: u64) -> bool {
        match self {
            Backend::Cuda(b) => b.inline(n),
            Backend::Cpu(_) => false,
        }
    }
    /// The per-task completion record of `seq`; valid only after its segment's record
    /// was acquired, and only if its `stamp` is `stamp_for(seq)`.
    pub fn completion(&self, seq: u64) -> *const Completion {
        each!(self, b => b.completion(seq))
    }
    /// Marks the record of the segment starting at `first` unwritten (`spent_stamp`),
    /// before that segment is published (its index's last segment has completed).
    pub fn spend_segment(&self, first: u64) {
        let d = self.segment_done(first) as *mut SegmentDone;
        // SAFETY: the live record array; atomic, as the finishers' stores are. No
        // worker writes this record until the segment is published, after this.
        unsafe { std::sync::atomic::AtomicU32::from_ptr(&raw mut (*d).stamp) }
            .store(resident_shared::spent_stamp(first as u32), std::sync::atomic::Ordering::Relaxed);
    }
    /// The record of the segment starting at `first`. Read `stamp` with acquire first.
    pub fn segment_done(&self, first: u64) -> *const SegmentDone {
        each!(self, b => b.segment_done(first))
    }
    /// Address of word `id` of the counter table (counter `id`, or its dropped flag at
    /// `DROPPED + id`), for `upload`/`download`.
    pub fn counter_addr(&self, id: usize) -> u64 {
        each!(self, b => b.counter_addr(id))
    }
    pub fn alloc(&self, bytes: usize) -> Result<Memory> {
        each!(self, b => b.alloc(bytes))
    }
    /// Copies `src` (elements of `elem` bytes) to `dst`. Tasks may access that memory
    /// meanwhile: on the CPU backend the copy is made of atomic element accesses
    /// (`resident_device::arch::racy`), so a race gives torn values, never undefined
    /// behaviour; on a GPU a copy racing a kernel is that already.
    ///
    /// # Safety
    /// `dst..dst+src.len()` must lie in memory from [`Backend::alloc`] (or the counter
    /// table), holding elements of `elem` bytes from `dst` on.
    pub unsafe fn upload(&self, dst: u64, src: &[u8], elem: usize) -> Result<()> {
        each!(self, b => unsafe { b.upload(dst, src, elem) })
    }
    /// Copies from `src` (elements of `elem` bytes) into `dst`; as [`Backend::upload`].
    ///
    /// # Safety
    /// `src..src+dst.len()` must lie in memory from [`Backend::alloc`] (or the counter
    /// table), holding elements of `elem` bytes from `src` on.
    pub unsafe fn download(&self, src: u64, dst: &mut [u8], elem: usize) -> Result<()> {
        each!(self, b => unsafe { b.download(src, dst, elem) })
    }
    /// Writes one buffer-table entry, visible to every task published after this returns.
    pub fn set_buffer_entry(&self, index: usize, e: BufferEntry) -> Result<()> {
        each!(self, b => b.set_buffer_entry(index, e))
    }
    /// A new link's outbox (`resident_shared::link`): its index in the link table, its
    /// host address, and the address the workers push to. `TooManyLinks` after
    /// `MAX_LINKS` (indices are never reused: host/multi/link.rs).
    pub fn new_outbox(&self, bytes: usize) -> Result<(usize, *mut u8, u64)> {
        each!(self, b => b.new_outbox(bytes))
    }
    /// Link `index`'s `enqueue` counter (positions handed out to pushes so far).
    pub fn link_enqueued(&self, index: usize) -> Result<u32> {
        each!(self, b => b.link_enqueued(index))
    }
    /// Writes link-table entry `index`, visible to every task published after this
    /// returns (`keep_outbox`: only its generation word).
    pub fn set_link_entry(&self, index: usize, e: resident_shared::link::LinkEntry, keep_outbox: bool) -> Result<()> {
        each!(self, b => b.set_link_entry(index, e, keep_outbox))
    }
    /// Cancels the segment whose first task is `first` (its `cancel` word:
    /// `resident_shared::SegmentCount`): its tasks that wait or poll end with
    /// `Status::Cancelled`. A segment finished already ignores it.
    pub fn cancel_segment(&self, first: u64) -> Result<()> {
        each!(self, b => b.cancel_segment(first))
    }
    pub fn health(&self) -> Health {
        each!(self, b => b.health())
    }
    /// Whether no task pushed in through a peer link can be running (CUDA:
    /// `CudaBackend::peer_tasks_quiet`; the CPU backend has no peer links).
    pub fn peer_tasks_quiet(&self) -> bool {
        match self {
            Backend::Cpu(_) => true,
            Backend::Cuda(b) => b.peer_tasks_quiet(),
        }
    }
    /// The device fault the backend holds, if any, whether or not the runtime has
    /// recorded it yet: a CPU worker's panic (`CpuBackend::fault`, set before it raised
    /// `abort`), or a dead kernel's sticky error (a driver query: the caller binds).
    /// For the runtime to consult before it answers `ShutDown` or `Aborted`.
    pub fn fault(&self) -> Option<crate::Error> {
        match self {
            Backend::Cpu(b) => b.fault(),
            Backend::Cuda(b) => match b.health() {
                Health::Fault(e) => Some(e),
                _ => None,
            },
        }
    }
    /// Asks every worker to leave as soon as it can (running tasks that poll, like
    /// `spin`, end early with `Aborted`).
    pub fn abort(&self) -> Result<()> {
        each!(self, b => b.abort())
    }
    /// Every worker has left the loop or died: nothing of theirs touches memory any more.
    pub fn workers_gone(&self) -> bool {
        each!(self, b => b.workers_gone())
    }
    /// Waits up to `timeout` (`None`: no limit) for every worker to leave; true if they did.
    pub fn wait_exit(&self, timeout: Option<Duration>) -> bool {
        each!(self, b => b.wait_exit(timeout))
    }
    /// Elastic residency (host/runtime/residency.rs): the workers leave an idle queue and the
    /// queue is reset so that a relaunch resumes at `next` (tasks reserved so far, all
    /// completed) and `runs` (list runs published so far). The caller holds the producer
    /// lock. False if the workers did not leave within the bound (nothing is reset then:
    /// they still run, as before).
    pub fn park(&self, next: u64, runs: u64) -> Result<bool> {
        each!(self, b => b.park(next, runs))
    }
    /// Launches the workers of a parked queue again (the caller holds the producer lock).
    pub fn unpark(&self) -> Result<()> {
        each!(self, b => b.unpark())
    }
    /// The workers left an idle queue and were not launched again yet.
    pub fn is_parked(&self) -> bool {
        each!(self, b => b.is_parked())
    }
    /// The buffer table's address, as the workers (and `resident_one_task`) read it.
    pub fn table_ptr(&self) -> u64 {
        each!(self, b => b.table_ptr())
    }
    pub fn cuda(&self) -> Option<&CudaBackend> {
        match self {
            Backend::Cuda(b) => Some(b),
            Backend::Cpu(_) => None,
        }
    }
}
