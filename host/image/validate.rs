//! The host-side check of a task before anything of its batch is submitted: one generic
//! check for every task type, driven by the type's declaration (`DeviceTask::declare`:
//! the slices it reads and writes, its counters, the types it pushes). The device checks
//! every slice again when the task resolves it (`TaskCx::view`); this check is what
//! gives the caller a typed error instead of a failed completion.

use resident_shared::{Access, ArgError, BufferHandle, Collected, CounterId, Declare, Task, TaskId};

use crate::error::{Error, Rejection};
use crate::image::task_set::SetInfo;
use crate::memory::registry::{BufferRegistry, CounterRegistry};

/// What a task's declaration said, beyond its checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Declared {
    /// It may push children: its ticket must wait for its segment, not its record.
    pub spawns: bool,
    /// Only `Batch::submit_unchecked` may pass it.
    pub unchecked: bool,
    /// Its record was built by another type than the set's of its id.
    pub foreign: bool,
}

/// Checks every task of a batch; the first bad one names its index. The set's own
/// loop ([`validate_set`], monomorphized for it), so that no task costs an indirect call.
pub(crate) fn validate(tasks: &[Task], set: &SetInfo, reg: &BufferRegistry, counters: &CounterRegistry) -> Result<(), Error> {
    (set.validate)(tasks, set, reg, counters)
}

/// [`validate`] for the set `S`: its dispatch and its types' declarations inline into
/// the loop (a noop's check: 5.1 ns through a function pointer, 3.5 ns inlined, on the CI-class host of 2026-11-25: `timing::host_passes`).
pub(crate) fn validate_set<S: resident_device::TaskSet>(
    tasks: &[Task],
    set: &SetInfo,
    reg: &BufferRegistry,
    counters: &CounterRegistry,
) -> Result<(), Error> {
    validate_ahead::<S, PREFETCH_AHEAD>(tasks, set, reg, counters)
}

/// [`validate_set`] with tasks fetched `AHEAD` tasks ahead (0: none); other distances
/// only in the timing tests.
#[inline(always)]
fn validate_ahead<S: resident_device::TaskSet, const AHEAD: usize>(
    tasks: &[Task],
    set: &SetInfo,
    reg: &BufferRegistry,
    counters: &CounterRegistry,
) -> Result<(), Error> {
    let mut c = Collected::new();
    if AHEAD > 0 {
        // The first tasks too (a batch's first `AHEAD` are not fetched by the loop).
        tasks.iter().take(AHEAD).for_each(|t| prefetch(Some(t)));
    }
    for (index, t) in tasks.iter().enumerate() {
        if AHEAD > 0 {
            prefetch(tasks.get(index + AHEAD));
        }
        check_in(t, set, reg, counters, &mut c, |t, c| S::declare(t, &mut resident_shared::Declare::collect(c)))
            .map_err(|reason| Error::InvalidTask { index, reason })?;
    }
    Ok(())
}

/// Tasks (64 bytes, a cache line each) fetched ahead of the check. A batch streamed from
/// the user's memory is usually not in the host's caches: one thread then checked a noop
/// in 9.4 ns on the H100 machine's host, against 4 ns for tasks in cache (measured with
/// the `phase-timing` build); the check's branches keep the hardware prefetcher from
/// running far enough ahead. 64 (4 KB ahead), not 16: batches of 1024 noops streamed cold
/// from 128 MB checked in 6.76 µs against 7.98 (H100 machine's host; 5.2-5.4 against
/// 5.6-6.0 on the CI-class host; `timing::cold_stream`), 32 in between.
const PREFETCH_AHEAD: usize = 64;

/// Asks the CPU to bring `t`'s cache line in (x86-64; elsewhere, nothing).
#[inline(always)]
fn prefetch(t: Option<&Task>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = t {
        // SAFETY: a prefetch is a hint: it changes nothing the program can observe and
        // never faults (and `t` is a live reference besides).
        unsafe { core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>((t as *const Task).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = t;
}

/// One task: the runtime's header words, its counters, then its type's declaration,
/// item by item (slices are numbered in the order declared, from 0), collected into
/// `c` (reused from task to task: no call per item, no allocation).
#[inline]
pub(crate) fn check_with(
    t: &Task,
    set: &SetInfo,
    reg: &BufferRegistry,
    counters: &CounterRegistry,
    c: &mut Collected,
) -> Result<Declared, Rejection> {
    check_in(t, set, reg, counters, c, set.declare_collect)
}

/// [`check_with`], with the declaration `collect` given (a set's own, inlined, or the
/// set's function pointer).
#[inline(always)]
fn check_in(
    t: &Task,
    set: &SetInfo,
    reg: &BufferRegistry,
    counters: &CounterRegistry,
    c: &mut Collected,
    collect: impl FnOnce(&Task, &mut Collected) -> Option<Result<(), ArgError>>,
) -> Result<Declared, Rejection> {
    // Most tasks name no header counter: `seg` and both counter indices zero (one test
    // for the common case; the words are checked one by one otherwise). `flags` holds
    // the building type's tag, which the set's dispatch checks (`declare_as`).
    if (t.wait_counter | t.signal_counter) != 0 || t.seg != 0 {
        header(t, counters)?;
    }
    not_reserved(t)?;
    verdict(t, collect(t, c))?;
    // The common case first: every item passes, told by a test per item with no
    // rejection built or copied (about half of an axpy's check, by instruction count).
    // Otherwise the items again, to name the first bad one.
    if let Some(items) = c.items()
        && items.iter().all(|a| passes(a, set, reg, counters))
    {
        let mut d = Declared::default();
        items.iter().for_each(|a| d.note(a));
        return d.verdict(t);
    }
    let mut slices = 0;
    let mut first_bad = None;
    let mut one = |a: Access| {
        let bad = item(a, &mut slices, set, reg, counters);
        if first_bad.is_none() {
            first_bad = bad;
        }
    };
    let declared = match c.items() {
        Some(items) => {
            let mut d = Declared::default();
            for a in items {
                d.note(a);
                one(*a);
            }
            d
        }
        // More items than the collector holds: the device could not hold the task to
        // its declaration (it collects as many), so it is refused.
        None => return Err(Rejection::DeclarationTooLong { max: resident_shared::COLLECTED }),
    };
    if declared.foreign {
        return Err(Rejection::ForeignType(t.id()));
    }
    if let Some(bad) = first_bad {
        return Err(bad);
    }
    declared.verdict(t)
}

/// The runtime's header words of `t`: each header counter either absent (index and
/// generation zero: `seg` carries the generations until submission) or live.
#[inline(never)]
fn header(t: &Task, counters: &CounterRegistry) -> Result<(), Rejection> {
    for c in <[CounterId; 2]>::from(t.header_counters()) {
        if c.index == 0 {
            if c.generation != 0 {
                return Err(Rejection::NonZeroReserved);
            }
        } else if !counters.is_live(c) {
            return Err(Rejection::BadCounter(c.index));
        }
    }
    Ok(())
}

/// One item of a declaration against the live buffers and counters; `slices` numbers
/// the slices.
#[inline(always)]
fn item(a: Access, slices: &mut usize, set: &SetInfo, reg: &BufferRegistry, counters: &CounterRegistry) -> Option<Rejection> {
    match a {
        Access::Slice { slice, elem, .. } => {
            let arg = *slices;
            *slices += 1;
            match reg.entry(slice.handle) {
                Some(e) if e.names(slice, elem) && e.contains(slice) => None,
                Some(e) if e.names(slice, elem) => Some(Rejection::OutOfRange { arg, offset: slice.offset, len: slice.len }),
                _ => Some(Rejection::BadBuffer { arg, handle: slice.handle.0 }),
            }
        }
        Access::Counter(c) if !counters.is_live(c) => Some(Rejection::BadCounter(c.index)),
        Access::Spawns(id) if !set.ids.contains(&id) => Some(Rejection::UnknownChild(id)),
        _ => None,
    }
}

/// Whether item `a` passes [`item`] (the same test, without its rejection).
#[inline(always)]
fn passes(a: &Access, set: &SetInfo, reg: &BufferRegistry, counters: &CounterRegistry) -> bool {
    match *a {
        Access::Slice { slice, elem, .. } => reg.holds(slice, elem),
        Access::Counter(c) => counters.is_live(c),
        Access::Spawns(id) => set.ids.contains(&id),
        Access::Unchecked | Access::Foreign => true,
    }
}

impl Declared {
    /// What item `a` says of the task beyond its checks.
    #[inline(always)]
    fn note(&mut self, a: &Access) {
        match a {
            Access::Spawns(_) => self.spawns = true,
            Access::Unchecked => self.unchecked = true,
            Access::Foreign => self.foreign = true,
            _ => {}
        }
    }

    /// The task's verdict once its items passed: refused if its record is another
    /// type's, or if only `Batch::submit_unchecked` may pass it.
    #[inline(always)]
    fn verdict(self, t: &Task) -> Result<Self, Rejection> {
        if self.foreign {
            Err(Rejection::ForeignType(t.id()))
        } else if self.unchecked {
            Err(Rejection::RequiresUnchecked(t.id()))
        } else {
            Ok(self)
        }
    }
}

/// The terminate sentinel and list chunks belong to the runtime: no user submits them.
pub(crate) fn not_reserved(t: &Task) -> Result<(), Rejection> {
    if matches!(t.id(), TaskId::TERMINATE | TaskId::LIST_CHUNK) { Err(Rejection::ReservedTask(t.id())) } else { Ok(()) }
}

/// Task `t`'s declaration's own verdict as a rejection (`None`: its id is not in the
/// set).
fn verdict(t: &Task, r: Option<Result<(), ArgError>>) -> Result<(), Rejection> {
    match r {
        None => Err(Rejection::UnknownTask(t.id())),
        Some(Err(e)) => Err(match e {
            ArgError::LengthMismatch(a, b) => Rejection::LengthMismatch(a, b),
            ArgError::IndexOutOfRange { index, len } => Rejection::IndexOutOfRange { index, len },
            ArgError::Bad(why) => Rejection::BadArgs(why),
        }),
        Some(Ok(())) => Ok(()),
    }
}

/// Runs `t`'s declaration, handing each item to `item`; what it said, or why its
/// arguments are refused (its own check, an id outside the set, the sentinel).
pub(crate) fn declare(t: &Task, set: &SetInfo, mut item: impl FnMut(Access)) -> Result<Declared, Rejection> {
    not_reserved(t)?;
    let mut out = Declared::default();
    let mut sink = |a: Access| {
        out.note(&a);
        item(a)
    };
    verdict(t, (set.declare)(t, &mut Declare::new(&mut sink)))?;
    Ok(out)
}

/// Every buffer and counter the tasks of a resident list name (sorted, without
/// repeats): what the list re-checks at each submission, since any of them may have
/// been dropped since its upload.
#[derive(Debug, Default)]
pub(crate) struct Names {
    /// Buffers of the declared slices (a task that pushes tasks declares what they
    /// touch too).
    pub buffers: Vec<BufferHandle>,
    /// Counters of the header (`after`, `signals`) and of the declarations.
    pub counters: Vec<CounterId>,
}

impl Names {
    pub fn of(tasks: &[Task], set: &SetInfo) -> Self {
        let mut out = Self::default();
        for t in tasks {
            out.counters.extend(<[CounterId; 2]>::from(t.header_counters()).into_iter().filter(|c| c.index != 0));
            let _ = declare(t, set, |a| match a {
                Access::Slice { slice, .. } => out.buffers.push(slice.handle),
                Access::Counter(c) => out.counters.push(c),
                _ => {}
            });
        }
        out.buffers.sort_by_key(|h| h.0);
        out.buffers.dedup();
        out.counters.sort_unstable_by_key(|c| (c.index, c.generation));
        out.counters.dedup();
        out
    }

    /// The first name that is not live any more, as the rejection a submit gets.
    pub fn check(&self, reg: &BufferRegistry, counters: &CounterRegistry) -> Result<(), Rejection> {
        if let Some(h) = self.buffers.iter().find(|h| reg.entry(**h).is_none()) {
            return Err(Rejection::BadBuffer { arg: 0, handle: h.0 });
        }
        match self.counters.iter().find(|&&c| !counters.is_live(c)) {
            Some(&c) => Err(Rejection::BadCounter(c.index)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod timing {
    use super::*;
    use crate::backend::placement::Placement;
    use crate::util::timing::med;
    use resident_shared::{ElemType, Slice};

    #[test]
    #[ignore]
    fn host_passes() {
        let set = SetInfo::of::<resident_device::Builtins>();
        let mut reg = BufferRegistry::new();
        let counters = CounterRegistry::new();
        let hx = reg.register(0x1000_0000, 20_000 * 1024, ElemType::of::<f32>()).unwrap();
        let hy = reg.register(0x2000_0000, 20_000 * 1024, ElemType::of::<f32>()).unwrap();
        let noop: Vec<Task> = (0..20_000u64).map(Task::noop).collect();
        let axpy: Vec<Task> = (0..20_000)
            .map(|i| {
                let x = Slice::<f32>::new(hx, (i * 1024) as u32, 1024);
                let y = Slice::<f32>::new(hy, (i * 1024) as u32, 1024);
                Task::axpy(1.0, x, y)
            })
            .collect();
        let mut ring = vec![Task::noop(0); 1 << 16];
        let place = Placement::batch(20_000, 0, 1024);
        println!("validate noop {:.1} us", med(|| validate(&noop, &set, &reg, &counters).unwrap()));
        println!("validate axpy {:.1} us", med(|| validate(&axpy, &set, &reg, &counters).unwrap()));
        println!("validate 1024 axpys (in cache) {:.2} us", med(|| validate(&axpy[..1024], &set, &reg, &counters).unwrap()));
        println!(
            "stage {:.1} us",
            med(|| {
                for (i, t) in noop.iter().enumerate() {
                    unsafe { ring.as_mut_ptr().add(i).write(place.apply(i, t)) };
                }
                std::hint::black_box(&ring);
            })
        );
        println!(
            "memcpy {:.1} us",
            med(|| {
                ring[..20_000].copy_from_slice(&noop);
                std::hint::black_box(&ring);
            })
        );
        // A streamed batch of 1024 (one producer, below the parallel threshold): the
        // two passes, and one fused pass that checks each task and writes its placed
        // record (what a check-and-stage pass into reserved slots would cost).
        let small = &noop[..1024];
        let place = Placement::batch(1024, 0, 1024);
        let v = med(|| validate(small, &set, &reg, &counters).unwrap());
        let st = med(|| {
            for (i, t) in small.iter().enumerate() {
                unsafe { ring.as_mut_ptr().add(i).write(place.apply(i, t)) };
            }
            std::hint::black_box(&ring);
        });
        let fused = med(|| {
            let mut c = Collected::new();
            for (i, t) in small.iter().enumerate() {
                check_with(t, &set, &reg, &counters, &mut c).unwrap();
                unsafe { ring.as_mut_ptr().add(i).write(place.apply(i, t)) };
            }
            std::hint::black_box(&ring);
        });
        println!("1024 noops: validate {v:.2} us + stage {st:.2} us; fused {fused:.2} us");
    }

    /// The per-thread rate of T host threads at once, each checking and then staging
    /// its own share of a 20,000-task batch (plain memory, no GPU, no runtime): does a
    /// thread check and stage as fast beside seven others as alone? Separates the
    /// host's own scaling from the pass's (~21 ns an axpy check and ~10 ns a staged
    /// record per thread in the pass, against ~8 and ~3.5 alone). `cargo test --release
    /// --lib parallel_rates -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn parallel_rates() {
        use std::sync::Barrier;
        use std::time::Instant;
        const N: usize = 20_000;
        const REPS: usize = 201;
        let set = SetInfo::of::<resident_device::Builtins>();
        let mut reg = BufferRegistry::new();
        let counters = CounterRegistry::new();
        let hx = reg.register(0x1000_0000, (N * 1024) as u32, ElemType::of::<f32>()).unwrap();
        let hy = reg.register(0x2000_0000, (N * 1024) as u32, ElemType::of::<f32>()).unwrap();
        let noop: Vec<Task> = (0..N as u64).map(Task::noop).collect();
        let axpy: Vec<Task> = (0..N)
            .map(|i| Task::axpy(1.0, Slice::<f32>::new(hx, (i * 1024) as u32, 1024), Slice::<f32>::new(hy, (i * 1024) as u32, 1024)))
            .collect();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let place = Placement::batch(N as u32, 0, 1024);
        for (name, tasks) in [("noop", &noop), ("axpy", &axpy)] {
            for threads in [1, 2, 4, 8, 12, 16].into_iter().filter(|&t| t <= cores) {
                let mut ring = vec![Task::noop(0); N];
                // Written through this pointer only (not `as_ptr`: a shared borrow's
                // pointer may not be written through).
                let ring_at = ring.as_mut_ptr() as usize;
                let barrier = Barrier::new(threads);
                let share = N.div_ceil(threads);
                // Per rep and thread: (check, stage) in ns.
                let times: Vec<Vec<(f64, f64)>> = std::thread::scope(|s| {
                    let hs: Vec<_> = (0..threads)
                        .map(|th| {
                            let (barrier, set, reg, counters) = (&barrier, &set, &reg, &counters);
                            s.spawn(move || {
                                let lo = (th * share).min(N);
                                let hi = (lo + share).min(N);
                                let mine = &tasks[lo..hi];
                                let mut out = vec![];
                                for _ in 0..REPS {
                                    barrier.wait();
                                    let t0 = Instant::now();
                                    validate(mine, set, reg, counters).unwrap();
                                    let t1 = Instant::now();
                                    for (i, t) in mine.iter().enumerate() {
                                        // SAFETY: each thread writes its own range of `ring`, which outlives the scope.
                                        unsafe { (ring_at as *mut Task).add(lo + i).write(place.apply(lo + i, t)) };
                                    }
                                    let t2 = Instant::now();
                                    out.push(((t1 - t0).as_nanos() as f64, (t2 - t1).as_nanos() as f64));
                                }
                                out
                            })
                        })
                        .collect();
                    hs.into_iter().map(|h| h.join().unwrap()).collect()
                });
                let med = |f: &dyn Fn(&(f64, f64)) -> f64| {
                    let mut v: Vec<f64> = (20..REPS).flat_map(|r| times.iter().map(move |t| t[r])).map(|x| f(&x)).collect();
                    v.sort_by(f64::total_cmp);
                    v[v.len() / 2] / share as f64
                };
                println!(
                    "{name}: {threads:2} threads: check {:.2} ns/task, stage {:.2} ns/task (per thread, median)",
                    med(&|t| t.0),
                    med(&|t| t.1)
                );
                std::hint::black_box(&ring);
            }
        }
    }

    /// A stream of batches of 1024 noops from a 128 MB vector (not in cache, as the
    /// streaming bench's), checked with tasks fetched 0 to 64 ahead, then staged as
    /// compact records with streaming stores into a 2 MB ring; and one fused pass
    /// that checks each task and stages it at once. Microseconds a batch, median of
    /// the stream's batches. `cargo test --release --lib cold_stream -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn cold_stream() {
        use resident_shared::CompactTask;
        use std::time::Instant;
        const N: usize = 1 << 21;
        const B: usize = 1024;
        let set = SetInfo::of::<resident_device::Builtins>();
        let reg = BufferRegistry::new();
        let counters = CounterRegistry::new();
        let tasks: Vec<Task> = (0..N as u64).map(Task::noop).collect();
        let mut ring = vec![<CompactTask as bytemuck::Zeroable>::zeroed(); 1 << 16];
        let place = Placement::batch(B as u32, 0, 1024);
        type S = resident_device::Builtins;
        // Median µs of `f` over the stream's batches of `b`, each staged at its place.
        let mut run = |name: &str, b: usize, f: &mut dyn FnMut(&[Task], &mut [CompactTask])| {
            let mut v = vec![];
            for (k, batch) in tasks.chunks(b).enumerate() {
                let at = (k * b) % ring.len();
                let t0 = Instant::now();
                f(batch, &mut ring[at..at + b]);
                v.push(t0.elapsed().as_secs_f64() * 1e6);
            }
            v.sort_by(f64::total_cmp);
            println!("{name}: {:.2} us a batch of {b} (median of {})", v[v.len() / 2], v.len());
        };
        // Checks (`check`), or stages (`stage`), or both, `ahead` tasks fetched ahead:
        // in two passes, or fused into one.
        let pass = |b: &[Task], r: &mut [CompactTask], check: bool, stage: bool, fused: bool, ahead: usize| {
            let ok = match (check, fused, ahead) {
                (false, ..) | (true, true, _) => Ok(()),
                (true, false, 0) => validate_ahead::<S, 0>(b, &set, &reg, &counters),
                (true, false, 16) => validate_ahead::<S, 16>(b, &set, &reg, &counters),
                (true, false, 32) => validate_ahead::<S, 32>(b, &set, &reg, &counters),
                (true, false, _) => validate_ahead::<S, 64>(b, &set, &reg, &counters),
            };
            ok.unwrap();
            let mut c = Collected::new();
            for (i, t) in b.iter().enumerate().filter(|_| stage) {
                if fused {
                    prefetch(b.get(i + ahead));
                    check_with(t, &set, &reg, &counters, &mut c).unwrap();
                }
                let c = place.apply(i, t).compact().unwrap();
                // SAFETY: in `r`, 16-byte aligned.
                unsafe { crate::backend::cuda::nt_store::write_record(&mut r[i], c) };
            }
            crate::backend::cuda::nt_store::fence();
        };
        for _ in 0..2 {
            run("check, ahead 16", 256, &mut |b, r| pass(b, r, true, false, false, 16));
            run("check, ahead 64 (now)", 256, &mut |b, r| pass(b, r, true, false, false, 64));
            for ahead in [0, 16, 32, 64] {
                run(&format!("check, ahead {ahead}"), B, &mut |b, r| pass(b, r, true, false, false, ahead));
            }
            run("stage only (cold)", B, &mut |b, r| pass(b, r, false, true, false, 0));
            for ahead in [16, 32, 64] {
                run(&format!("check ({ahead}) then stage"), B, &mut |b, r| pass(b, r, true, true, false, ahead));
            }
            for ahead in [64, 16] {
                run(&format!("fused check + stage, ahead {ahead}"), B, &mut |b, r| pass(b, r, true, true, true, ahead));
            }
        }
    }
}
