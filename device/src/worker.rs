//! The persistent loop: what every worker warp runs from launch to shutdown.
//! Claim a range of slots, wait for each to be published, wait for its dependency, run
//! it, complete it; leave on the terminate sentinel or on abort. A slot may stand for a
//! chunk of a resident list's tasks (`Chunk`), run a pass each. The queue protocol is
//! in [`crate::queue`], completion counting in [`crate::completion`], dependencies in
//! [`crate::deps`], the tasks in [`crate::task`].

use resident_shared::{
    BufferEntry, CompactTask, Completion, KernelParams, MAX_LIST_CHUNK, OneTaskParams, QueueHeader, Status, TableParams, Task, TaskId,
    stamp_for, task_flags, worker_flags,
};

use crate::arch;
use crate::builtin::terminate;
use crate::completion::Completer;
use crate::lists::{ListTable, RunCache};
use crate::queue::{DeviceQueue, FULL_POLL_EVERY, Wait};
use crate::spawn::SpawnRing;
use crate::task::{Outcome, TaskCx, TaskSet};
use resident_shared::steps::step;

/// Whether this build's loop runs list chunks (docs/protocol.md 4c): not in an image
/// built without them (`resident_build::KernelBuild::list_chunks`), whose loop then
/// carries none of their code (nor their registers around the set's code).
const LIST_CHUNKS: bool = !cfg!(resident_no_list_chunks);

/// With `worker_flags::SPARSE_LOOK`, a queue task is followed by a look for children
/// when its sequence number is a multiple of this.
const SPARSE_LOOK_EVERY: u32 = 4;

/// Runs the persistent loop on the calling warp (GPU) or thread (CPU backend),
/// dispatching tasks to the set `S` (`crate::Builtins`, or a user's set).
///
/// # Safety
/// `p` must describe a live queue (see [`DeviceQueue::new`]), buffer table, counter
/// table, completion arrays and spawn ring.
#[inline(always)]
pub unsafe fn persistent_loop<S: TaskSet>(p: &KernelParams) {
    unsafe { serve::<S>(p) };
    // Leaving, after every task this warp ran has completed: counted for the relay,
    // which stays until every worker has left (device/src/relay.rs, step 6).
    // Acquire-release, .gpu (more than needed: the relay's relaxed load of the count
    // reads nothing through it).
    arch::syncwarp();
    if arch::lane_id() == 0 {
        unsafe { arch::atom_add_acq_rel_gpu(&raw mut (*(p.header as *mut QueueHeader)).exited.value, 1) };
    }
}

/// The loop itself, until the warp leaves (sentinel or abort).
///
/// # Safety
/// As for [`persistent_loop`].
#[inline(always)]
unsafe fn serve<S: TaskSet>(p: &KernelParams) {
    let q = unsafe { DeviceQueue::new(p) };
    let done = unsafe { Completer::new(p) };
    let spawn = unsafe { SpawnRing::new(p) };
    let lists = unsafe { ListTable::new(p) };
    // The list run this warp's last list task came from (`crate::lists`, step 3).
    let mut list_run = RunCache::EMPTY;
    // The CPU backend's copy of a task read from host memory (the GPU's warps copy it
    // into their stage in shared memory, `arch::warp_stage`).
    let mut local = core::mem::MaybeUninit::<Task>::uninit();
    // The list chunk this warp runs ([`Chunk`]): its tasks still to run, and the rest
    // of its state in the lane's local memory, not in registers across the set's code.
    let mut chunk = core::mem::MaybeUninit::<Chunk>::uninit();
    if LIST_CHUNKS {
        // SAFETY: the lane's own.
        unsafe { core::ptr::write_volatile(chunk.as_mut_ptr(), Chunk::NONE) };
    }
    let base = TaskCx {
        buffers: p.buffers as *const BufferEntry,
        header: q.header(),
        counters: p.counters as *mut u32,
        spawn,
        counts: done.counts(),
        child_seg: 0,
        cancel_stamp: 0,
        spawned: core::cell::Cell::new(false),
        declared: crate::task::Declared::NONE,
    };
    let preclaim = p.flags & worker_flags::PRECLAIM != 0;
    let sparse_look = p.flags & worker_flags::SPARSE_LOOK != 0;
    // The `tail` this lane last acquired, loaded now (acquire, .sys: as every load of
    // it, `crate::queue`): after an idle exit and relaunch the queue resumes mid-lap,
    // and a `tail_seen` of 0 would pass the publication window for the last `capacity`
    // sequence numbers before 2^32 (slots of the previous lap run again).
    let mut tail_seen = unsafe { arch::ld_acquire_sys(&raw const (*q.header()).tail.value) };
    let mut next = if preclaim { unsafe { q.start_claim() } } else { 0 };
    // The claimed range `[first, first + claim)` and the next slot of it to run.
    let mut first = 0u32;
    let mut k = q.claim;
    let mut stopping = false;
    let mut sleep = 0u32;
    // Whether to look for children before the next slot: after every task (children
    // first: they belong to tasks already running, whose tickets wait; with
    // `SPARSE_LOOK`, after a child, after a task that pushed one, and after every few
    // queue tasks), and after an idle poll that saw the spawn ring non-empty.
    let mut look = true;
    // Idle polls since the last task (every few is a full one: `crate::queue`).
    let mut polls = 0u32;
    // The children popped into this warp's batch area (`crate::spawn`, step 5) still to
    // run: entries `[0, batch_left)`, run from the last.
    let mut batch_left = 0u32;
    // The last task pushed children.
    let mut after_push = false;
    // Profiling builds: cycles per step of this loop (`crate::steps`; nothing otherwise).
    let mut steps = crate::steps::Steps::new(p);
    // One place runs tasks, whichever their source: one inlined copy of the task code
    // keeps the register count low enough for three blocks per SM.
    loop {
        // Inside a chunk, a look only after a task that pushed children (the spawning
        // warp drains them, as below); the rest wait for the chunk's end.
        // SAFETY: the lane's own `Chunk`.
        let chunk_left = if LIST_CHUNKS { unsafe { core::ptr::read_volatile(&raw const (*chunk.as_ptr()).left) } } else { 0 };
        if (chunk_left == 0 || after_push) && batch_left == 0 && look && unsafe { spawn.maybe_nonempty() } {
            // SAFETY: the last batch has run; this warp is one of the grid's workers.
            // Draining (a pop that looks again while a push or a give-back is under way)
            // when leaving, and right after this warp pushed: its children are then
            // taken by it or by another warp, never left while it claims a queue task
            // that may wait on them (`crate::deps`).
            batch_left = unsafe { spawn.try_pop(stopping || after_push) };
        }
        // Children first, inside a chunk too: it goes on after them.
        let child = batch_left > 0;
        let in_chunk = !child && chunk_left > 0;
        steps.lap(step::CHILDREN);
        // The task is read in place (ring slot, list or batch entry), field by field as
        // the task code needs it, not copied into registers first.
        let (seq, task) = match child {
            // The next task of the chunk this warp runs, under the chunk's slot.
            _ if in_chunk => {
                let at = chunk.as_mut_ptr();
                // SAFETY: the lane's own `Chunk`, written when the chunk's slot was found.
                let c = unsafe { core::ptr::read_volatile(at) };
                unsafe {
                    core::ptr::write_volatile(&raw mut (*at).pos, c.pos + 1);
                    core::ptr::write_volatile(&raw mut (*at).left, c.left - 1);
                }
                (c.seq, c.tasks.wrapping_add(c.pos as usize))
            }
            true => {
                batch_left -= 1;
                // A child's number is not its slot's: it is counted by its `seg` word
                // (`crate::completion`); the batch entry stands in.
                (batch_left, spawn.batched(batch_left))
            }
            // Step 8 of spawn.rs: past the sentinel, leave once no child is left.
            false if stopping => return,
            false => {
                if k == q.claim {
                    if !preclaim {
                        next = unsafe { q.start_claim() };
                    }
                    first = q.claimed(next);
                    k = 0;
                    steps.lap(step::CLAIM);
                }
                let seq = first.wrapping_add(k);
                polls = polls.wrapping_add(1);
                let full = polls.is_multiple_of(FULL_POLL_EVERY);
                match unsafe { q.poll_published(seq, &mut tail_seen, &spawn, full) } {
                    Wait::Ready => steps.lap(step::POLL),
                    Wait::Pending { children } => {
                        look = children;
                        if !children {
                            q.backoff(&mut sleep);
                        }
                        steps.lap(step::IDLE);
                        continue;
                    }
                    // Any claimed slot after this one lies after the sentinel too:
                    // none will ever be published.
                    Wait::Stop => {
                        stopping = true;
                        look = true;
                        continue;
                    }
                    Wait::Abort => return,
                }
                k += 1;
                // A list run's task is read from the list, any other from the ring.
                let task = unsafe { lists.find(seq, &mut list_run) }.unwrap_or_else(|| q.slot(seq));
                steps.lap(step::FIND);
                if list_run.in_host() && list_run.holds(seq) {
                    // In host memory (the host ring): read whole, all loads in flight
                    // at once (one round trip over PCIe, where the task code's reads
                    // field by field would each wait for one), into a copy the task
                    // code reads. Plain loads after the acquire of `tail`, as in place.
                    // On the GPU into the warp's stage in shared memory (one copy a
                    // warp, `arch::warp_stage`); on the CPU backend into the lane's own.
                    let to = if arch::WARP == 1 { local.as_mut_ptr() } else { arch::warp_stage().cast::<Task>() };
                    if list_run.compact() {
                        unsafe { copy_compact(task.cast(), to) };
                    } else {
                        unsafe { copy_task(task, to) };
                    }
                    steps.lap(step::COPY);
                    (seq, to as *const Task)
                } else {
                    // A list chunk is honoured only where the runtime wrote it: a
                    // resident list in device memory (validated at upload; every
                    // submission path refuses the opcode). Its tasks run from the next
                    // pass on, one a pass, through the one call site below.
                    if LIST_CHUNKS && list_run.holds(seq) && unsafe { Chunk::starts(task, chunk.as_mut_ptr(), seq) } {
                        continue;
                    }
                    // The task's second 32-byte sector (the tail of its arguments),
                    // asked for now: the first read of the task fetches only the first.
                    arch::prefetch_l1(task.cast::<u8>().wrapping_add(32));
                    (seq, task)
                }
            }
        };
        sleep = 0;
        // After a child, look again at once (its siblings wait); after a queue task,
        // with `SPARSE_LOOK` only after every few (by its sequence number: no state),
        // or if it pushed a child (below). Idle polls look too. Decided here, not after
        // the task: one flag, not `seq`, stays live across the task's inlined code.
        look = !sparse_look || child || seq.is_multiple_of(SPARSE_LOOK_EVERY);
        polls = 0;
        // The next claim's atomic is issued once this task may run (its dependency
        // met), not before: a task that waits on a counter then holds no later slot
        // that its wait would keep from every other worker (one waiting task must not
        // wedge unrelated work). Still before the task body, so the claim's
        // latency overlaps it.
        // In a chunk, once: with its last task.
        let last = chunk_left <= 1;
        let claim_next = !child && preclaim && k == q.claim && last;
        let pushed = unsafe {
            run::<S>(&done, &base, seq, &*task, in_chunk.then_some((chunk.as_mut_ptr(), last)), &mut steps, || {
                if claim_next {
                    next = q.start_claim();
                }
            })
        };
        // A task that pushed children is followed by a look, whatever its sequence
        // number: the warp that spawns drains the ring (it looks again after every
        // child) before it claims a queue task, as without `SPARSE_LOOK`. So a later
        // queue task that waits on those children (a counter they signal) never has
        // every warp waiting while they sit in the ring. Warp-uniform: every lane's flag
        // was set from the same verdict (`TaskCx::spawn`).
        if pushed {
            look = true;
        }
        after_push = pushed;
        steps.lap(step::DONE);
        steps.task();
    }
}

/// Copies the task at `from` into `to`. On the GPU one load instruction reads the
/// whole task (lane `i` its 16 bytes `i % 4`: one 64-byte request, one round trip when
/// `from` lies in host memory, where four loads of 16 bytes each were four requests),
/// and lanes 0-3 store it into `to`, the warp's stage in shared memory
/// ([`arch::warp_stage`]), between two warp barriers: the first keeps the stores behind
/// every lane's last read of the stage (the task before, lane 0's completion
/// included), the second makes them visible to every lane. On the CPU backend the
/// lane copies it whole into its own `to`, with volatile stores (memory, not
/// registers across the task).
///
/// # Safety
/// `from` must be a published task, readable (see [`DeviceQueue::slot`]); `to` the
/// warp's stage (GPU) or the lane's own (CPU). Every lane must call.
#[inline(always)]
unsafe fn copy_task(from: *const Task, to: *mut Task) {
    let p = from as *const u64;
    let q = to as *mut u64;
    if arch::WARP == 1 {
        // The CPU backend's one lane.
        for i in 0..8 {
            unsafe { core::ptr::write_volatile(q.add(i), p.add(i).read()) };
        }
        return;
    }
    let part = (arch::lane_id() % 4) as usize;
    let (a, b) = unsafe { arch::ld_weak_v2_u64(p.add(2 * part)) };
    arch::syncwarp();
    if arch::lane_id() < 4 {
        unsafe {
            core::ptr::write_volatile(q.add(2 * part), a);
            core::ptr::write_volatile(q.add(2 * part + 1), b);
        }
    }
    arch::syncwarp();
}

/// Copies the compact task at `from` into `to`, widened ([`CompactTask::widen`]): one
/// 32-byte request on the GPU (lane `i` loads its 16 bytes `i % 2`), shuffles give
/// every lane all of it, and lanes 0-7 store a word each of the widened task into the
/// warp's stage, between two warp barriers, as in [`copy_task`].
///
/// # Safety
/// `from` must be a published compact task, readable; `to` as for [`copy_task`]. Every
/// lane must call.
#[inline(always)]
unsafe fn copy_compact(from: *const CompactTask, to: *mut Task) {
    let q = to as *mut u64;
    if arch::WARP == 1 {
        // The CPU backend's one lane.
        let words: [u64; 8] = bytemuck::cast(unsafe { from.read() }.widen());
        for (i, w) in words.into_iter().enumerate() {
            unsafe { core::ptr::write_volatile(q.add(i), w) };
        }
        return;
    }
    let p = from as *const u64;
    let part = (arch::lane_id() % 2) as usize;
    let (a, b) = unsafe { arch::ld_weak_v2_u64(p.add(2 * part)) };
    let word = |v: u64, src: u32| arch::shfl_idx(v as u32, src) as u64 | (arch::shfl_idx((v >> 32) as u32, src) as u64) << 32;
    let c: CompactTask = bytemuck::cast([word(a, 0), word(b, 0), word(a, 1), word(b, 1)]);
    let words: [u64; 8] = bytemuck::cast(c.widen());
    arch::syncwarp();
    let lane = arch::lane_id() as usize;
    if lane < 8 {
        unsafe { core::ptr::write_volatile(q.add(lane), words[lane]) };
    }
    arch::syncwarp();
}

/// Runs one task of the queue (slot `seq`), a child from the warp's batch (entry
/// `seq`, entries below it still to run: its completion waits for theirs,
/// `crate::completion`, step 4'), or a task of the list chunk in slot `seq` (`chunk`:
/// the warp's [`Chunk`], and whether this is its last task); `ready` runs once the
/// task's dependency is met (or failed), before its body. Whether the task pushed a
/// child.
///
/// A chunk's task runs under its chunk's record (its context, its cancellation, the
/// segment its children count in), signals its own counter, and keeps the chunk's
/// first failure; the last completes the slot once, with that failure's status and
/// its place in the chunk as the result (the host's `TaskFailed::index`).
#[inline(always)]
unsafe fn run<S: TaskSet>(
    done: &Completer,
    base: &TaskCx,
    seq: u32,
    task: &Task,
    chunk: Option<(*mut Chunk, bool)>,
    steps: &mut crate::steps::Steps,
    ready: impl FnOnce(),
) -> bool {
    // SAFETY: a chunk is the lane's own, written when its slot was found.
    let slot = match chunk {
        None => task,
        Some((at, _)) => unsafe { &*core::ptr::read_volatile(&raw const (*at).record) },
    };
    let cx = base.for_task(done.child_seg(seq, slot), done.cancel_stamp(seq, slot));
    let out = if slot.flags & task_flags::RELAYED != 0 {
        // The relay warp ran it already (device/src/relay.rs): only count it.
        ready();
        Outcome::ok(0)
    } else {
        // A chunk's tasks wait on nothing (the host chunks only such lists); its
        // record neither.
        let waited = unsafe { crate::deps::wait(&cx, slot) };
        ready();
        steps.lap(step::RUN);
        let out = match waited {
            Ok(()) => unsafe { dispatch::<S>(task, &cx, seq) },
            Err(status) => Outcome::err(status),
        };
        steps.lap(step::BODY);
        out
    };
    let out = if let Some((at, last)) = chunk {
        // As `Completer::complete` signals a queue task's counter: every lane's writes
        // before lane 0's release add (`crate::deps`).
        arch::syncwarp();
        if arch::lane_id() == 0 {
            unsafe { crate::deps::signal(cx.counters, task) };
        }
        match unsafe { Chunk::done(at, out, last) } {
            Some(out) => out,
            None => return cx.spawned.get(),
        }
    } else {
        out
    };
    // Read again, not kept from above: a pointer live across the set's inlined code
    // costs the loop registers (spills). SAFETY: as above; the slot's record, run (its
    // tasks) once.
    let slot = match chunk {
        None => task,
        Some((at, _)) => unsafe { &*core::ptr::read_volatile(&raw const (*at).record) },
    };
    unsafe { done.complete(seq, slot, out) };
    cx.spawned.get()
}

/// The list chunk a warp runs ([`Task::list_chunk`], docs/protocol.md 4c):
/// its slot, its tasks and how far it got, in each lane's local memory.
#[derive(Clone, Copy)]
pub(crate) struct Chunk {
    /// The chunk's record (in the list, in device memory).
    record: *const Task,
    /// Its first task.
    tasks: *const Task,
    /// Its slot's sequence number.
    seq: u32,
    /// Tasks taken so far.
    pos: u32,
    /// The first failure: its place + 1 (high 16 bits) and status (low 16); 0: none.
    failed: u32,
    /// Tasks still to run (0: no chunk).
    left: u32,
}

impl Chunk {
    /// No chunk.
    const NONE: Self = Self { record: core::ptr::null(), tasks: core::ptr::null(), seq: 0, pos: 0, failed: 0, left: 0 };

    /// If `task` (the task of published slot `seq`, of a resident list in device
    /// memory) is a list chunk of 1 to `MAX_LIST_CHUNK` tasks: starts it (`left` its
    /// count, `at` its state) and asks for its tasks' lines, a lane's prefetch each.
    /// A record of that opcode with another count is run as a task, and fails as one
    /// (no set holds the id).
    ///
    /// # Safety
    /// `task` readable, after the acquire of `tail` that showed `seq` published; `at`
    /// the lane's own. Every lane must call.
    #[inline(always)]
    unsafe fn starts(task: *const Task, at: *mut Chunk, seq: u32) -> bool {
        let t = unsafe { &*task };
        if t.opcode != TaskId::LIST_CHUNK.0 {
            return false;
        }
        let (addr, count) = t.chunk_span();
        if count == 0 || count > MAX_LIST_CHUNK {
            return false;
        }
        let tasks = addr as *const Task;
        let mut lane = arch::lane_id();
        while lane < count {
            let p = tasks.wrapping_add(lane as usize).cast::<u8>();
            arch::prefetch_l1(p);
            arch::prefetch_l1(p.wrapping_add(32));
            lane += arch::WARP;
        }
        unsafe { core::ptr::write_volatile(at, Chunk { record: task, tasks, seq, pos: 0, failed: 0, left: count }) };
        true
    }

    /// One more task of the chunk ran with `out`: keeps the first failure; after the
    /// `last`, the slot's outcome.
    ///
    /// # Safety
    /// `at` the lane's own chunk, a task of it taken.
    #[inline(always)]
    unsafe fn done(at: *mut Chunk, out: Outcome, last: bool) -> Option<Outcome> {
        let failed = unsafe { core::ptr::read_volatile(&raw const (*at).failed) };
        // `pos` counts the task just run: its place + 1.
        let failed = if out.status != Status::Ok && failed == 0 {
            let place = unsafe { core::ptr::read_volatile(&raw const (*at).pos) };
            place << 16 | out.status as u32
        } else {
            failed
        };
        if !last {
            unsafe { core::ptr::write_volatile(&raw mut (*at).failed, failed) };
            return None;
        }
        Some(match failed {
            0 => Outcome::ok(0),
            f => Outcome { status: Status::from_u32(f & 0xffff).unwrap_or(Status::Failed), result: ((f >> 16) - 1) as u64 },
        })
    }
}

/// Runs `task` (slot `seq`): the terminate sentinel, which belongs to the runtime and
/// no set, or the set's dispatch. The outcome is the warp's: if any lane failed, lane 0
/// reports the first failing lane's status (a task's lanes may disagree; lane 0 writes
/// the record).
///
/// # Safety
/// `cx` must be the live queue's context (or a baseline's, with null queue parts).
#[inline(always)]
pub(crate) unsafe fn dispatch<S: TaskSet>(task: &Task, cx: &TaskCx, seq: u32) -> Outcome {
    let out = if task.opcode == TaskId::TERMINATE.0 {
        if task.flags & task_flags::CHILD == 0 { unsafe { terminate::run(cx.header, seq) } } else { Outcome::err(Status::InvalidOpcode) }
    } else {
        S::execute(task, cx)
    };
    warp_outcome(out)
}

/// The warp's outcome of a task: if any lane failed, the first failing lane's status
/// (in lane 0, which writes the record); else each lane's own.
#[inline(always)]
pub(crate) fn warp_outcome(out: Outcome) -> Outcome {
    let bad = arch::ballot(out.status != Status::Ok);
    // Warp-uniform condition (a ballot): every lane takes the same branch, so the
    // shuffle below has every lane.
    if bad != 0 && bad & 1 == 0 {
        let status = arch::shfl_idx(out.status as u32, bad.trailing_zeros());
        return Outcome::err(Status::from_u32(status).unwrap_or(Status::Failed));
    }
    out
}

/// Runs one task outside the queue: the body of the one-launch-per-task baseline.
/// The completion is written with plain stores; kernel completion orders it.
///
/// # Safety
/// `p.buffers` must point to a buffer table, `p.completion` to a writable record.
pub unsafe fn run_one<S: TaskSet>(p: &OneTaskParams) {
    let cx = TaskCx::outside_queue(p.buffers as *const BufferEntry);
    let out = unsafe { dispatch::<S>(&p.task, &cx, p.seq) };
    if crate::arch::lane_id() == 0 {
        let rec = p.completion as *mut Completion;
        unsafe { rec.write(Completion { stamp: stamp_for(p.seq), status: out.status as u32, result: out.result }) };
    }
}

/// Runs task `w` of a table on global warp `w`: the body of the one-launch-over-a-table
/// baseline, what a CUDA programmer writes for a known set of tasks. Each task runs
/// through the set's dispatch held to its declaration, as in the queue; nothing is
/// recorded (kernel completion is the only signal).
///
/// # Safety
/// `p.buffers` must point to a buffer table, `p.tasks` to `p.len` readable tasks.
pub unsafe fn run_table<S: TaskSet>(p: &TableParams) {
    let w = crate::arch::global_warp_id();
    if w >= p.len {
        return;
    }
    let cx = TaskCx::outside_queue(p.buffers as *const BufferEntry);
    // SAFETY: `w < len` (the caller's table).
    let task = unsafe { &*(p.tasks as *const Task).add(w as usize) };
    let _ = unsafe { dispatch::<S>(task, &cx, w) };
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;
    use resident_shared::{TASK_ARGS, task_flags};

    // The CPU backend's one-lane copies: a compact task widens to the task it stands
    // for, over whatever the lane's copy held before; a full task is copied whole.
    #[test]
    fn copies_widen_compact_tasks_and_keep_full_ones() {
        let mut t = Task::raw(0x123, [1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0]);
        t.flags = task_flags::RESULT;
        t.seg = 0x0004_0003;
        let c = t.compact().unwrap();
        let mut out = Task::raw(0xdead, [0xffff_ffff; TASK_ARGS]);
        out.wait_value = 7;
        unsafe { copy_compact(&c, &mut out) };
        assert_eq!(out, t);
        let full = Task::raw(0x321, core::array::from_fn(|i| i as u32 + 1));
        unsafe { copy_task(&full, &mut out) };
        assert_eq!(out, full);
    }
}
