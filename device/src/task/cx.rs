//! [`TaskCx`]: what a running task may see of the runtime and of the hardware.

use resident_shared::segment::{self, SegmentCount};
use resident_shared::spawn;
use resident_shared::{Access, AccessMode, BufferEntry, CounterId, ElemType, Element, Grant, QueueHeader, Slice, Status, Task, task_flags};

use super::declared::Declared;
use super::{DeviceTask, View};
use crate::spawn::SpawnRing;
use crate::{arch, buffers};

/// A running task's context: its warp's identity, the runtime's buffers and counters,
/// this warp's scratch shared memory, and pushes of follow-up tasks. A handful of
/// addresses the persistent loop keeps in registers, and a flag of the task's own; lent
/// to the task for its run (not `Clone`, so that no copy of it outlives the run).
pub struct TaskCx {
    pub(crate) buffers: *const BufferEntry,
    /// Null when the task runs outside the queue (the one-launch baseline).
    pub(crate) header: *mut QueueHeader,
    /// The device counter table (`MAX_COUNTERS` entries); null outside the queue.
    pub(crate) counters: *mut u32,
    /// Where [`TaskCx::spawn`] pushes; none outside the queue.
    pub(crate) spawn: SpawnRing,
    /// The segment counts (`crate::completion`); null outside the queue.
    pub(crate) counts: *mut SegmentCount,
    /// The running task's segment as a child's `seg` word ([`segment::child`]): its
    /// children are counted in the same segment.
    pub(crate) child_seg: u32,
    /// `stamp_for` of the running task's segment's first task: the value of the
    /// segment's `cancel` word that cancels it ([`TaskCx::cancelled`]); 0 for a task
    /// that cannot be cancelled (a pushed child, a task outside the queue).
    pub(crate) cancel_stamp: u32,
    /// Set (each lane its own) when the task pushed a child into the spawn ring: the
    /// persistent loop then looks for children before it claims again (with
    /// `worker_flags::SPARSE_LOOK`, device/src/worker.rs).
    pub(crate) spawned: core::cell::Cell<bool>,
    /// The running task's declaration (`task::run_as`), which every view, counter and
    /// push is held to (`super::declared`); grants nothing outside a task's run.
    pub(crate) declared: Declared,
}

/// A slice whose table entry is being loaded ([`TaskCx::lookup`]); [`Lookup::view`]
/// checks it.
#[derive(Clone, Copy)]
pub struct Lookup<'a, T> {
    entry: BufferEntry,
    slice: Slice<T>,
    grant: Grant,
    _run: core::marker::PhantomData<&'a TaskCx>,
}

impl<'a, T: Element> Lookup<'a, T> {
    /// The checked view: `Undeclared` unless the task's declaration grants the slice,
    /// `BadBuffer` unless it names a live buffer of `T`, `OutOfRange` unless it lies
    /// within it.
    #[inline(always)]
    pub fn view(self) -> Result<View<'a, T>, Status> {
        checked(self.entry, self.slice, self.grant)
    }
}

/// A slice as a declaration item (its mode is not looked at by a query).
#[inline(always)]
fn wanted<T: Element>(s: Slice<T>) -> Access {
    Access::Slice { slice: s.erase(), elem: ElemType::of::<T>(), mode: AccessMode::Read }
}

/// The view of `s`, whose table entry is `e` and which the declaration grants `grant`.
#[inline(always)]
fn checked<'a, T: Element>(e: BufferEntry, s: Slice<T>, grant: Grant) -> Result<View<'a, T>, Status> {
    let p = buffers::check::<T>(e, s.erase());
    if grant == Grant::NONE {
        return Err(Status::Undeclared);
    }
    p.map(|p| View::new(p, s.len, grant))
}

impl TaskCx {
    /// The context of a task run outside the queue (the one-launch baselines): the
    /// buffer table alone; no counters, no pushes, no segment.
    #[inline(always)]
    pub(crate) fn outside_queue(buffers: *const BufferEntry) -> TaskCx {
        TaskCx {
            buffers,
            header: core::ptr::null_mut(),
            counters: core::ptr::null_mut(),
            spawn: SpawnRing::NONE,
            counts: core::ptr::null_mut(),
            child_seg: 0,
            cancel_stamp: 0,
            spawned: core::cell::Cell::new(false),
            declared: Declared::NONE,
        }
    }

    /// The context of a task of `child_seg`'s segment (cancelled by `cancel_stamp`),
    /// from the persistent loop's own (`self`), with a clear `spawned` flag.
    #[inline(always)]
    pub(crate) fn for_task(&self, child_seg: u32, cancel_stamp: u32) -> TaskCx {
        TaskCx {
            buffers: self.buffers,
            header: self.header,
            counters: self.counters,
            spawn: self.spawn,
            counts: self.counts,
            child_seg,
            cancel_stamp,
            spawned: core::cell::Cell::new(false),
            declared: Declared::NONE,
        }
    }

    /// The context a task's run gets: this one's, held to the task's declaration
    /// `items`.
    ///
    /// # Safety
    /// `items` must stay readable while the context is used (the running task's
    /// declaration, for its run).
    #[inline(always)]
    pub(crate) unsafe fn for_run(&self, items: &resident_shared::Collected) -> TaskCx {
        TaskCx { declared: unsafe { Declared::of(items) }, ..self.for_task(self.child_seg, self.cancel_stamp) }
    }

    /// The context a run of a type whose author vouched for it gets
    /// (`DeclarationCheck::vouched`): this one's, everything granted.
    #[inline(always)]
    pub(crate) fn for_vouched_run(&self) -> TaskCx {
        TaskCx { declared: Declared::EVERYTHING, ..self.for_task(self.child_seg, self.cancel_stamp) }
    }

    /// What the running task's declaration grants `s`.
    #[inline(always)]
    fn grant<T: Element>(&self, s: Slice<T>) -> Grant {
        self.declared.grant(wanted(s))
    }

    /// Whether the running task's declaration names counter `c`.
    #[inline(always)]
    fn names_counter(&self, c: CounterId) -> bool {
        self.declared.grant(Access::Counter(c)).contains(Grant::NAMED)
    }

    // --- Who runs the task ---

    /// This thread's lane in its warp (always 0 on the CPU backend).
    #[inline(always)]
    pub fn lane(&self) -> u32 {
        arch::lane_id()
    }
    /// Lanes in a warp: 32 on a GPU, 1 on the CPU backend.
    #[inline(always)]
    pub fn warp_width(&self) -> u32 {
        arch::WARP
    }
    /// This warp's index in its block.
    #[inline(always)]
    pub fn warp_in_block(&self) -> u32 {
        arch::block_warp_id()
    }
    /// Warps in this warp's block. A task the relay warp runs itself (a lone express
    /// task) is in the relay kernel's block: two warps, block 0 of that kernel, not of
    /// the persistent grid.
    #[inline(always)]
    pub fn warps_per_block(&self) -> u32 {
        arch::block_warps()
    }
    /// The index of this warp's block in the persistent grid (the worker thread's index
    /// on the CPU backend).
    #[inline(always)]
    pub fn block(&self) -> u32 {
        arch::block_idx()
    }
    /// The indices this lane handles when a warp splits `0..n` across its lanes:
    /// `lane, lane + width, ...` (coalesced when each lane touches one element).
    #[inline(always)]
    pub fn lane_range(&self, n: u32) -> core::iter::StepBy<core::ops::Range<u32>> {
        (arch::lane_id()..n).step_by(arch::WARP as usize)
    }
    /// Warp barrier: every lane's memory operations so far (global and scratch) happen
    /// before every lane's later ones. Warp-collective.
    #[inline(always)]
    pub fn sync_warp(&self) {
        arch::syncwarp()
    }
    /// The sum of `v` over the warp's lanes, in every lane (wrapping):
    /// [`TaskCx::warp_sum`] of a `u32`. Warp-collective.
    #[inline(always)]
    pub fn warp_sum_u32(&self, v: u32) -> u32 {
        self.warp_sum(v)
    }
    /// The sum of `v` over the warp's lanes, in every lane (a butterfly: the same
    /// rounding in every lane): [`TaskCx::warp_sum`] of an `f32`. Warp-collective.
    #[inline(always)]
    pub fn warp_sum_f32(&self, v: f32) -> f32 {
        self.warp_sum(v)
    }

    /// The runtime asked every worker to stop: a long task should return
    /// `Err(Status::Aborted)` soon.
    #[inline(always)]
    pub fn aborting(&self) -> bool {
        // Relaxed, .sys: nothing is read through `abort` (the task only ends), and an
        // acquire load would invalidate the SM's L1 at every poll of a long task.
        !self.header.is_null() && unsafe { arch::ld_relaxed_sys(&raw const (*self.header).abort.value) } != 0
    }

    /// Whether the host cancelled this task's ticket (`Ticket::cancel`). A task that
    /// runs long should poll it (and [`TaskCx::aborting`]) and end with
    /// `Err(Status::Cancelled)`: the runtime cannot stop a task that does not. Waits on
    /// counters poll it already. Tasks pushed on the device are not cancellable.
    #[inline(always)]
    pub fn cancelled(&self) -> bool {
        if self.cancel_stamp == 0 || self.counts.is_null() {
            return false;
        }
        let entry = segment::child_index(self.child_seg) as usize;
        // Relaxed, .sys: a flag the host writes (a copy into device memory, or a
        // relaxed store on the CPU backend) while the task polls; it orders nothing.
        // The stamp names this segment: a word left by an earlier user of the entry
        // never equals it.
        unsafe { arch::ld_relaxed_sys(&raw const (*self.counts.add(entry)).cancel) == self.cancel_stamp }
    }

    // --- Buffers ---

    /// The elements `s` names, if the task's declaration grants them (`Undeclared`
    /// otherwise: `s` must lie within a slice the task's `declare` names, and the view
    /// allows the writes and atomic updates its mode grants), and if it names a live
    /// buffer of `T` and lies within it (`BadBuffer` or `OutOfRange` otherwise): the
    /// device's own check, whatever the host checked.
    #[inline(always)]
    pub fn view<T: Element>(&self, s: Slice<T>) -> Result<View<'_, T>, Status> {
        // SAFETY: `buffers` is the live table of `MAX_BUFFERS` entries (the loop's
        // contract, `crate::worker`), and the task was handed over by an acquire
        // (`buffers::entry`'s ordering).
        let e = unsafe { buffers::entry(self.buffers, s.erase()) };
        checked(e, s, self.grant(s))
    }

    /// The first half of [`TaskCx::view`]: issues the load of `s`'s table entry and
    /// returns at once; [`Lookup::view`] checks it. Look up every slice a task needs
    /// first, then check them: the loads are in flight together (one wait, not one per
    /// slice), and each check's `?` returns straight from the task (what the persistent
    /// kernel's register budget wants: a combined result costs registers).
    #[inline(always)]
    pub fn lookup<T: Element>(&self, s: Slice<T>) -> Lookup<'_, T> {
        // SAFETY: as in `view`.
        Lookup {
            entry: unsafe { buffers::entry(self.buffers, s.erase()) },
            slice: s,
            grant: self.grant(s),
            _run: core::marker::PhantomData,
        }
    }

    /// Two views, both table entries loaded before either is checked: one wait for
    /// the two loads instead of two in a row. (In code under register pressure, prefer
    /// two [`TaskCx::lookup`]s and two checks.)
    #[inline(always)]
    pub fn view2<A: Element, B: Element>(&self, a: Slice<A>, b: Slice<B>) -> Result<(View<'_, A>, View<'_, B>), Status> {
        // SAFETY: as in `view`.
        let (ea, eb) = unsafe { (buffers::entry(self.buffers, a.erase()), buffers::entry(self.buffers, b.erase())) };
        Ok((checked(ea, a, self.grant(a))?, checked(eb, b, self.grant(b))?))
    }

    /// `N` views of one element type, every entry loaded before any is checked (as for
    /// [`TaskCx::view2`]).
    #[inline(always)]
    pub fn views<T: Element, const N: usize>(&self, s: [Slice<T>; N]) -> Result<[View<'_, T>; N], Status> {
        // SAFETY: as in `view`.
        let entries: [BufferEntry; N] = core::array::from_fn(|i| unsafe { buffers::entry(self.buffers, s[i].erase()) });
        let mut out = [View::new(core::ptr::null_mut(), 0, Grant::NONE); N];
        for i in 0..N {
            out[i] = checked(entries[i], s[i], self.grant(s[i]))?;
        }
        Ok(out)
    }

    // --- Scratch shared memory ---

    /// This warp's part of its block's shared memory, as `T`s: the image's scratch
    /// bytes per warp (`resident_build`'s `scratch_bytes_per_warp`), 16-byte aligned,
    /// empty if it asked for none. It stays this warp's for the kernel's life, so a task
    /// may leave data there for the warp's next task (check that it is yours: any task
    /// of the set may run next). On the CPU backend each worker thread has its own.
    #[inline(always)]
    pub fn scratch<T: Element>(&self) -> View<'_, T> {
        let per_warp = (arch::dyn_smem_bytes() / arch::block_warps()) & !15;
        let base = arch::dyn_smem().wrapping_add((arch::block_warp_id() * per_warp) as usize);
        View::new(base as *mut T, per_warp / size_of::<T>() as u32, Grant::ALL)
    }

    // --- Counters ---

    /// The current value of counter `c` (acquire, .gpu: once a task sees a value, it
    /// sees the writes of every task whose signal that value counts). `Undeclared`
    /// unless the task's declaration names `c` (`Declare::counter`).
    #[inline(always)]
    pub fn counter_value(&self, c: CounterId) -> Result<u32, Status> {
        if c.index == 0 || self.counters.is_null() {
            return Err(Status::BadArgs);
        }
        if !self.names_counter(c) {
            return Err(Status::Undeclared);
        }
        // SAFETY: the table has an entry for every 16-bit id (`MAX_COUNTERS`).
        Ok(unsafe { arch::ld_acquire_gpu(self.counters.add(c.index as usize)) })
    }

    /// Adds one to counter `c` (release, .gpu), after every lane's writes so far
    /// (warp-collective: every lane must call). `Undeclared` unless the task's
    /// declaration names `c` (`Declare::counter`).
    #[inline(always)]
    pub fn signal(&self, c: CounterId) -> Result<(), Status> {
        if c.index == 0 || self.counters.is_null() {
            return Err(Status::BadArgs);
        }
        if !self.names_counter(c) {
            return Err(Status::Undeclared);
        }
        arch::syncwarp();
        if arch::lane_id() == 0 {
            // SAFETY: as in `counter_value`. Release: the warp barrier above puts every
            // lane's writes before it (`crate::deps`).
            unsafe { arch::atom_add_acq_rel_gpu(self.counters.add(c.index as usize), 1) };
        }
        Ok(())
    }

    // --- Follow-up tasks ---

    /// Pushes `child` for another worker to run (warp-collective; every lane must call
    /// with the same arguments). The child completes as part of the running task's
    /// segment, so the host's ticket waits for it too. If the spawn ring is full, waits
    /// for room while other warps pop (at most
    /// [`PUSH_WAIT_NS`](resident_shared::spawn::PUSH_WAIT_NS)); `Err(QueueFull)` if
    /// none came: nothing was pushed (the children in flight at once outgrew
    /// `RuntimeConfig::spawn_capacity`). `Undeclared`, and nothing pushed, unless
    /// the running task declares the child's type (`Declare::spawns`) and everything
    /// the child declares lies within what the running task declares (each slice in a
    /// mode it grants, each counter named): what the host checked bounds what the
    /// children touch, and a ticket waits for every child (a task that declares no
    /// children may resolve its ticket from its own completion).
    ///
    /// A type that says `UNCHECKED` (raw addresses, fault injection) cannot be pushed: a
    /// compile-time error, so that no safe device code reaches what only the host's
    /// `unsafe` `Batch::submit_unchecked` may send.
    #[inline(always)]
    pub fn spawn<C: DeviceTask>(&self, child: &C) -> Result<(), Status> {
        self.spawn_each(1, |_| *child)
    }

    /// Pushes `n` children for other workers to run, child `k` being `child(k)`
    /// (warp-collective; every lane must call with the same `n` and `child`, a function
    /// of `k` alone): [`TaskCx::spawn`] for many at once. Lane `i` builds children
    /// `i`, `i + 32`, ...; each group of up to 32 (fewer if the spawn ring is smaller)
    /// is pushed with one reservation of the ring, not one per child. Each child is
    /// checked as `spawn` checks it; on an error the groups before the failing one stay
    /// pushed (they run, and the ticket waits for them), the failing group and those
    /// after it are not.
    #[inline(always)]
    pub fn spawn_each<C: DeviceTask>(&self, n: u32, child: impl Fn(u32) -> C) -> Result<(), Status> {
        const { assert!(!C::UNCHECKED, "TaskCx::spawn: an UNCHECKED task type cannot be pushed from the device") };
        // The same refusal at run time too (folded away for every checked type): the
        // assertion above fires when the kernel is compiled, not under `cargo check`.
        if C::UNCHECKED {
            return Err(Status::InvalidOpcode);
        }
        if !self.declared.grant(Access::Spawns(C::ID)).contains(Grant::NAMED) {
            return Err(Status::Undeclared);
        }
        let mut first = 0u32;
        while first < n {
            // A group never outgrows the ring (a tiny one), which could never take it.
            let count = (n - first).min(arch::WARP).min(self.spawn.capacity().max(1));
            // Lanes past the group build child `first` again (a record they never push).
            let c = child(if arch::lane_id() < count { first + arch::lane_id() } else { first });
            if !arch::all_lanes(self.declared.covers(&c)) {
                return Err(Status::Undeclared);
            }
            self.spawn_records(&Self::child_record(&c), count)?;
            first += count;
        }
        Ok(())
    }

    /// A child's record, built here, not by `child.task()` (which a type may override to
    /// return anything): `C`'s arguments and id, no header counters, and `C`'s tag in
    /// `wait_value` (a child waits on no counter), which the device compares with the
    /// set's type of that id before it runs the child (`task::run_as`): a type outside
    /// the set that shares an id with one in it is not run as that one, whose
    /// declaration was never held to the parent's.
    #[inline(always)]
    fn child_record<C: DeviceTask>(child: &C) -> Task {
        let mut t = Task::with_args(C::ID, child);
        t.wait_value = resident_shared::type_tag::<C>() as u32;
        t
    }

    /// Pushes `child` into another runtime's queue through `link` (warp-collective;
    /// every lane must call with the same arguments): the host made the link
    /// (`Link::new`) and handed its id to this task in its arguments. The child
    /// is checked by the other runtime as any submission is (its slices name that
    /// runtime's buffers; this runtime's host does not check them) and completes there:
    /// this task's ticket does not wait for it (`Link::flush` does). If the outbox is
    /// full, waits for the forwarder to pop (it never stops draining; an abort of the
    /// runtime ends the wait with `Err(Aborted)`); `Err(BadLink)` if `link` names no
    /// live link of this runtime.
    ///
    /// A type that says `UNCHECKED` cannot be pushed (a compile-time error).
    #[inline(always)]
    pub fn push_to<C: DeviceTask>(&self, link: resident_shared::link::LinkId, child: &C) -> Result<(), Status> {
        const { assert!(!C::UNCHECKED, "TaskCx::push_to: an UNCHECKED task type cannot be pushed from the device") };
        if C::UNCHECKED {
            return Err(Status::InvalidOpcode);
        }
        self.push_record(link, &Task::with_args(C::ID, child))
    }

    /// [`TaskCx::push_to`] of a task record as built.
    #[inline(never)]
    fn push_record(&self, link: resident_shared::link::LinkId, child: &Task) -> Result<(), Status> {
        // Not from the one-launch baseline (no queue), nor from the relay warp (no spawn
        // ring: a relay waiting for room in another runtime's inbox would stop serving
        // its own, and two relays could wait on each other), nor from a task pushed
        // through a peer link (no segment: its runtime could not wait for its pushes).
        if self.header.is_null() || self.spawn.is_none() || self.child_seg == segment::NO_PARENT {
            return Err(Status::BadLink);
        }
        let mut verdict = 0u32;
        if arch::lane_id() == 0 {
            // SAFETY: outside the one-launch baseline (checked above), `buffers` is the
            // runtime's whole table allocation (`resident_shared::link::TABLES_BYTES`).
            if let Err(s) = unsafe { crate::link::push(self.buffers, link, child, || self.aborting()) } {
                verdict = s as u32;
            }
        }
        match arch::shfl_idx(verdict, 0) {
            0 => Ok(()),
            v => Err(Status::from_u32(v).unwrap_or(Status::BadLink)),
        }
    }

    /// Pushes `n` (1 to [`arch::WARP`]) child records, lane `i < n` holding record `i`
    /// (warp-collective): the parent's count first, then one reservation for all
    /// (`crate::spawn`, steps 1-3 and 7), waiting for room as [`TaskCx::spawn`] says.
    #[inline(always)]
    fn spawn_records(&self, child: &Task, n: u32) -> Result<(), Status> {
        // A peer link's task has no segment to count children in (`crate::inbox`).
        if self.spawn.is_none() || self.counts.is_null() || self.child_seg == segment::NO_PARENT {
            return Err(Status::QueueFull);
        }
        let mut t = *child;
        t.flags = task_flags::CHILD;
        t.seg = self.child_seg;
        // SAFETY: `counts` holds an entry for every slot; `child_seg` names the running
        // task's entry (`crate::completion`).
        let state = unsafe { &raw mut (*self.counts.add(segment::child_index(self.child_seg) as usize)).state };
        if arch::lane_id() == 0 {
            // Step 7 of spawn.rs. Relaxed: program order puts it before this task's own
            // release add, and the warp barrier below before every lane's release of
            // its child's word.
            unsafe { arch::atom_add_relaxed_gpu_u64(state, segment::CHILD_ADD.wrapping_mul(n as u64)) };
        }
        arch::syncwarp();
        // SAFETY: the ring is live (not none, checked above).
        let mut pushed = unsafe { self.spawn.try_push_warp(&t, n) } != 0;
        if !pushed {
            // Backpressure (`resident_shared::spawn::PUSH_WAIT_NS`): other warps pop
            // meanwhile; give up after the bound, on an abort, or on a cancel. Lane 0's
            // clock and looks decide, for every lane (the push is warp-collective).
            let start = arch::globaltimer();
            let mut sleep = 32u32;
            while !pushed {
                let go = arch::globaltimer().wrapping_sub(start) < spawn::PUSH_WAIT_NS && !self.aborting() && !self.cancelled();
                if arch::shfl_idx(go as u32, 0) == 0 {
                    break;
                }
                arch::nanosleep(sleep);
                sleep = (sleep * 2).min(1024);
                pushed = unsafe { self.spawn.try_push_warp(&t, n) } != 0;
            }
        }
        if pushed {
            self.spawned.set(true);
            return Ok(());
        }
        // Lane 0's verdict, for every lane: why the wait ended, if not for lack of room.
        let mut verdict = Status::QueueFull as u32;
        if arch::lane_id() == 0 {
            unsafe { arch::atom_add_relaxed_gpu_u64(state, n as u64) };
            if self.aborting() {
                verdict = Status::Aborted as u32;
            } else if self.cancelled() {
                verdict = Status::Cancelled as u32;
            }
        }
        Err(Status::from_u32(arch::shfl_idx(verdict, 0)).unwrap_or(Status::QueueFull))
    }
}
