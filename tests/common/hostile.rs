//! Hostile and careless use of the public API: every scenario drives the
//! runtime the way an attacker or a new user would and requires a typed error (or the
//! documented outcome), never a crash, a panic, a hang or memory of another owner.
//! Run by `tests/hostile_cpu.rs` (CI) and `tests/hostile_gpu.rs` (on a GPU,
//! `--include-ignored`), each scenario in a child process under a time limit
//! (`isolate.rs`), so that a crash or a hang fails its test alone.

use resident::{BackendKind, Error, Rejection, Runtime, RuntimeConfig, Task};
use std::ops::Bound;
use std::time::{Duration, Instant};

/// How a suite makes its runtimes: a base configuration (the backend, a small ring),
/// and the configuration of a second runtime alive beside one of the first (the
/// "other" runtime whose handles are foreign). On a GPU the other is a CPU runtime:
/// a process holds one runtime per CUDA device (`Error::DeviceInUse`).
#[derive(Clone, Copy)]
pub struct Make {
    pub base: fn() -> RuntimeConfig,
    pub other: fn() -> RuntimeConfig,
}

impl Make {
    pub fn rt(&self) -> Runtime {
        self.with(|_| {}).expect("a runtime")
    }
    pub fn with(&self, f: impl FnOnce(&mut RuntimeConfig)) -> resident::Result<Runtime> {
        let mut c = (self.base)();
        f(&mut c);
        Runtime::with_config(c)
    }
    /// A runtime that may live beside one of [`Make::rt`]'s.
    pub fn other_rt(&self) -> Runtime {
        Runtime::with_config((self.other)()).expect("the other runtime")
    }
}

/// `rt` still serves: a tagged no-op comes back with its tag.
pub fn serves(rt: &Runtime) {
    assert_eq!(rt.batch(&[Task::noop(42)]).results().submit().unwrap().results().unwrap(), vec![42], "the runtime still serves");
}

fn bad_buffer<T: std::fmt::Debug>(r: resident::Result<T>) -> bool {
    matches!(r, Err(Error::InvalidTask { reason: Rejection::BadBuffer { .. }, .. }))
}

fn bad_counter<T: std::fmt::Debug>(r: resident::Result<T>) -> bool {
    matches!(r, Err(Error::InvalidTask { reason: Rejection::BadCounter(_), .. }))
}

// --- 1. Handles carry their runtime ---

/// A task list goes to the runtime that uploaded it and to no other (it carries it);
/// once that runtime is dropped or closed, its submission is refused, typed, and
/// nothing of it reaches a worker; the other runtime goes on.
pub fn foreign_task_list(make: Make) {
    let a = make.rt();
    let b = make.other_rt();
    let x = a.buffer_from(&[1.0f32; 64]).unwrap();
    let y = a.buffer_from(&[0.0f32; 64]).unwrap();
    let list = a.upload_tasks(&[Task::noop(1), Task::axpy(1.0, x.all(), y.all())]).unwrap();
    list.submit().unwrap().wait().unwrap();
    assert_eq!(y.read().unwrap(), vec![1.0; 64]);
    drop(a);
    assert_eq!(list.submit().err(), Some(Error::ShutDown));
    serves(&b);
    // The last handles of `a` go before another runtime of its kind (on a GPU, one
    // per device).
    drop((list, x, y));
    let c = make.rt();
    let own = c.upload_tasks(&[Task::noop(2)]).unwrap();
    c.close().unwrap();
    assert_eq!(own.submit().err(), Some(Error::ShutDown));
}

/// A second runtime on a CUDA device that holds one (or a buffer of one) is refused at
/// once with `DeviceInUse`, as is a stream-API handle that would load a module there:
/// either would wait in the driver for the first runtime's kernel forever. Once every
/// handle of the first is gone, a new one starts. On the CPU backend runtimes coexist.
pub fn second_runtime_on_one_device(make: Make) {
    let a = make.rt();
    let x = a.buffer_from(&[1u32; 16]).unwrap();
    let start = Instant::now();
    if a.backend().kind == BackendKind::Cuda {
        assert_eq!(make.with(|_| {}).err(), Some(Error::DeviceInUse(0)));
        assert_eq!(resident::stream::Device::new(0).err(), Some(Error::DeviceInUse(0)));
        a.close().unwrap();
        // A buffer keeps its runtime's memory (and device) alive.
        drop(a);
        assert_eq!(make.with(|_| {}).err(), Some(Error::DeviceInUse(0)));
        drop(x);
        serves(&make.rt());
        assert!(resident::stream::Device::new(0).is_ok(), "with no runtime, the stream API loads its module");
    } else {
        let b = make.rt();
        serves(&a);
        serves(&b);
        drop(x);
    }
    assert!(start.elapsed() < Duration::from_secs(20), "took {:?}", start.elapsed());
}

/// Slices of another runtime's buffers are refused by every checked path (submit,
/// try_submit, upload, reservations), even where that runtime's handle has the same
/// value as a live buffer of this one; the buffer of this runtime is untouched.
pub fn foreign_buffer_refused(make: Make) {
    let a = make.rt();
    let b = make.other_rt();
    let xa = a.buffer_from(&[1.0f32; 64]).unwrap();
    let ya = a.buffer_from(&[2.0f32; 64]).unwrap();
    let xb = b.buffer_from(&[3.0f32; 64]).unwrap();
    let yb = b.buffer_from(&[4.0f32; 64]).unwrap();
    let foreign = Task::axpy(1.0, xa.all(), ya.all());
    assert!(bad_buffer(b.submit(&[foreign])));
    assert!(bad_buffer(b.batch(&[foreign]).try_submit()));
    assert!(bad_buffer(b.upload_tasks(&[foreign])));
    let mut r = b.reserve(2).unwrap();
    assert!(bad_buffer(r.push(foreign)));
    r.push(Task::axpy(1.0, xb.all(), yb.all())).unwrap();
    r.commit().unwrap().wait().unwrap();
    assert_eq!(yb.read().unwrap(), vec![7.0; 64]);
    assert_eq!(ya.read().unwrap(), vec![2.0; 64]);
    // Mixed: one of this runtime's, one of the other's.
    assert!(bad_buffer(b.submit(&[Task::axpy(1.0, xb.all(), ya.all())])));
    assert_eq!(yb.read().unwrap(), vec![7.0; 64], "nothing of a refused batch ran");
}

/// Counter ids of another runtime are refused where tasks wait on or signal them.
pub fn foreign_counter_refused(make: Make) {
    let a = make.rt();
    let b = make.other_rt();
    let ca = a.counter().unwrap();
    let cb = b.counter().unwrap();
    assert!(bad_counter(b.submit(&[Task::noop(0).signals(ca.id())])));
    assert!(bad_counter(b.submit(&[Task::noop(0).after(ca.id(), 1)])));
    assert!(bad_counter(b.upload_tasks(&[Task::noop(0).signals(ca.id())])));
    b.submit(&[Task::noop(0).signals(cb.id())]).unwrap().wait().unwrap();
    assert_eq!((ca.value().unwrap(), cb.value().unwrap()), (0, 1));
}

/// A handle of a dropped buffer never names a later buffer, however many are made and
/// dropped in between (more than a 16-bit generation could tell apart), in this
/// runtime or another.
pub fn stale_handle_never_aliases(make: Make, rounds: usize) {
    let a = make.rt();
    let b = make.other_rt();
    let stale = {
        let x = a.buffer::<u32>(16).unwrap();
        x.all()
    };
    let mut seen = std::collections::HashSet::new();
    seen.insert(stale.handle);
    for i in 0..rounds {
        let rt = if i % 2 == 0 { &a } else { &b };
        let x = rt.buffer::<u32>(16).unwrap();
        assert_ne!(x.handle(), stale.handle, "round {i}: a new buffer took the handle of a dropped one");
        if i % 4096 == 0 {
            // Live buffers of two runtimes never share a handle either.
            let y = if i % 2 == 0 { b.buffer::<u32>(16).unwrap() } else { a.buffer::<u32>(16).unwrap() };
            assert_ne!(x.handle(), y.handle());
        }
        seen.insert(x.handle());
    }
    assert_eq!(seen.len(), rounds + 1, "every buffer got a handle of its own");
    let live = a.buffer::<u32>(16).unwrap();
    assert!(bad_buffer(a.submit(&[Task::mark(stale, 0)])));
    a.submit(&[Task::mark(live.all(), 0)]).unwrap().wait().unwrap();
    assert_eq!(live.read().unwrap()[0], 1);
}

/// A counter id of a dropped counter never names a later counter, however many are
/// made in between (more than the 65,535 indices: each comes back with a new
/// generation), in this runtime or another.
pub fn stale_counter_never_aliases(make: Make, rounds: usize) {
    let a = make.rt();
    let b = make.other_rt();
    let stale = a.counter().unwrap().id();
    let mut seen = std::collections::HashSet::new();
    seen.insert(stale);
    let mut reused = 0;
    for i in 0..rounds {
        let rt = if i % 2 == 0 { &a } else { &b };
        let c = rt.counter().unwrap();
        assert_ne!(c.id(), stale, "round {i}: a new counter took the id of a dropped one");
        reused += (c.id().index == stale.index) as usize;
        assert!(seen.insert(c.id()), "round {i}: an id handed out twice");
    }
    assert!(reused > 0, "the index never came back: the test proves nothing");
    let r = a.submit(&[Task::noop(0).signals(stale)]);
    assert!(bad_counter(r), "a stale counter id was accepted");
    let r = a.submit(&[Task::noop(0).after(stale, 0)]);
    assert!(bad_counter(r), "a stale counter id was accepted");
    serves(&a);
}

// --- 3. No arithmetic on user values panics, wraps or aborts ---

/// Timeouts up to `Duration::MAX`, wherever the API takes one.
pub fn timeouts_at_extremes(make: Make) {
    // In a block: the runtime and its tickets go before the next runtime (on a GPU,
    // one runtime per device, `DeviceInUse`, while any handle of the first lives).
    {
        let rt = make
            .with(|c| {
                c.shutdown_timeout = Duration::MAX;
                c.task_deadline = Some(Duration::MAX);
                c.async_spin = Duration::MAX;
            })
            .expect("extreme timeouts are accepted (saturated)");
        rt.submit(&[Task::noop(0)]).unwrap().wait_timeout(Duration::MAX).unwrap();
        let t = rt.submit(&[Task::spin(20_000_000)]).unwrap();
        t.wait_timeout(Duration::MAX).unwrap();
        assert_eq!(futures::executor::block_on(rt.submit(&[Task::spin(5_000_000)]).unwrap().wait_async()), Ok(()));
        let t = rt.submit(&[Task::spin(10_000_000)]).unwrap();
        assert_eq!(t.wait_timeout(Duration::ZERO).err().unwrap_or(Error::Timeout), Error::Timeout);
        rt.close().unwrap();
    }
    let z = make.with(|c| c.shutdown_timeout = Duration::ZERO).unwrap();
    let _ = z.submit(&[Task::spin(1_000_000)]).unwrap();
    let r = z.close();
    assert!(matches!(r, Ok(()) | Err(Error::Timeout)), "{r:?}");
}

/// Every configuration value at its extremes: a runtime that works, or a typed error;
/// never a panic or a crash.
pub fn config_extremes(make: Make) {
    type Tweak = (&'static str, fn(&mut RuntimeConfig));
    let tweaks: &[Tweak] = &[
        ("capacity 0", |c| c.capacity = 0),
        ("capacity 1", |c| c.capacity = 1),
        ("capacity 63", |c| c.capacity = 63),
        ("capacity u32::MAX", |c| c.capacity = u32::MAX),
        ("capacity 2^31", |c| c.capacity = 1 << 31),
        ("claim 0", |c| c.claim = 0),
        ("claim u32::MAX", |c| c.claim = u32::MAX),
        ("block_threads u32::MAX", |c| c.block_threads = u32::MAX),
        ("block_threads 32", |c| c.block_threads = 32),
        ("max_blocks_per_sm 0", |c| c.max_blocks_per_sm = 0),
        ("max_blocks_per_sm u32::MAX", |c| c.max_blocks_per_sm = u32::MAX),
        ("cpu_workers usize::MAX", |c| c.cpu_workers = usize::MAX),
        ("cpu_workers 100000", |c| c.cpu_workers = 100_000),
        ("cpu_workers 1", |c| c.cpu_workers = 1),
        ("max_poll_sleep_ns u32::MAX", |c| c.max_poll_sleep_ns = u32::MAX),
        ("list_first_piece 2^31", |c| c.list_first_piece = 1 << 31),
        ("list_chunk 2^31", |c| c.list_chunk = 1 << 31),
        ("list_chunk u32::MAX", |c| c.list_chunk = u32::MAX),
        ("segment_tasks 0", |c| c.segment_tasks = 0),
        ("segment_tasks u32::MAX", |c| c.segment_tasks = u32::MAX),
        ("spawn_capacity 0", |c| c.spawn_capacity = 0),
        ("spawn_capacity 2^31", |c| c.spawn_capacity = 1 << 31),
        ("relay_max_batch u32::MAX", |c| c.relay_max_batch = u32::MAX),
        ("publish_chunk 2^31", |c| c.publish_chunk = 1 << 31),
        ("submit_threads usize::MAX", |c| c.submit_threads = usize::MAX),
        ("buffer_arena usize::MAX", |c| c.buffer_arena = usize::MAX),
        ("device usize::MAX", |c| c.device = usize::MAX),
        ("task_deadline 0", |c| c.task_deadline = Some(Duration::ZERO)),
        ("worker_flags u32::MAX", |c| c.worker_flags = u32::MAX),
        ("residency IdleExit(0)", |c| c.residency = resident::Residency::IdleExit(Duration::ZERO)),
        ("residency IdleExit(Duration::MAX)", |c| c.residency = resident::Residency::IdleExit(Duration::MAX)),
        ("residency WhenDrained", |c| c.residency = resident::Residency::WhenDrained),
    ];
    for (what, tweak) in tweaks {
        let start = Instant::now();
        match make.with(tweak) {
            Ok(rt) => {
                serves(&rt);
                let big: Vec<Task> = (0..3000).map(Task::noop).collect();
                rt.submit(&big).unwrap().wait().unwrap();
                rt.close().unwrap();
            }
            Err(Error::Config(_) | Error::NoDevice | Error::NoDriver | Error::ArenaFull(_) | Error::Driver { .. }) => {}
            Err(e) => panic!("{what}: an unexpected error {e:?}"),
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{what}: took {:?}", start.elapsed());
    }
}

/// Ranges of every `RangeBounds` form, at the extremes of `usize`: `slice` never
/// panics (an impossible range gives a slice that every check refuses), `try_slice`
/// says why, and writes, buffers and reservations of extreme sizes are typed errors.
pub fn ranges_and_sizes_at_extremes(make: Make) {
    let rt = make.rt();
    let b = rt.buffer_from(&[1.0f32; 8]).unwrap();
    let y = rt.buffer_from(&[0.0f32; 8]).unwrap();
    let bad: Vec<(Bound<usize>, Bound<usize>)> = vec![
        (Bound::Included(0), Bound::Included(usize::MAX)),
        (Bound::Included(usize::MAX), Bound::Unbounded),
        (Bound::Excluded(usize::MAX), Bound::Unbounded),
        (Bound::Excluded(usize::MAX), Bound::Included(usize::MAX)),
        (Bound::Included(5), Bound::Excluded(2)),
        (Bound::Included(0), Bound::Excluded(9)),
        (Bound::Excluded(7), Bound::Included(8)),
        (Bound::Included(u32::MAX as usize + 1), Bound::Unbounded),
    ];
    for r in bad {
        let s = b.slice(r);
        assert!(matches!(b.try_slice(r), Err(Error::RangeOutOfBounds { .. })), "{r:?}");
        let refused = rt.submit(&[Task::axpy(1.0, s, y.slice(0..s.len.min(8) as usize))]);
        assert!(matches!(refused, Err(Error::InvalidTask { .. })), "{r:?}: {refused:?}");
    }
    for (r, len) in [
        ((Bound::Included(3), Bound::Included(2)), 0),
        ((Bound::Excluded(6), Bound::Included(7)), 1),
        ((Bound::Unbounded, Bound::Unbounded), 8),
    ] {
        assert_eq!(b.try_slice(r).unwrap().len, len, "{r:?}");
    }
    assert!(matches!(b.write_at(usize::MAX, &[1.0]), Err(Error::LengthMismatch { .. })));
    assert!(matches!(b.write_at(7, &[1.0, 2.0]), Err(Error::LengthMismatch { .. })));
    assert!(matches!(rt.buffer::<f32>(usize::MAX), Err(Error::BufferTooLarge(_))));
    // 16 GiB of u32: a typed error where memory runs out (CUDA: out of memory; CPU: the allocator's refusal).
    let huge = rt.buffer::<f64>(u32::MAX as usize);
    assert!(matches!(huge, Ok(_) | Err(Error::Config(_) | Error::Driver { .. } | Error::ArenaFull(_))), "{huge:?}");
    drop(huge);
    assert!(matches!(rt.reserve(usize::MAX), Err(Error::ExceedsQueue { .. })));
    assert!(matches!(rt.reserve(rt.backend().capacity + 1), Err(Error::ExceedsQueue { .. })));
    drop(rt.reserve(rt.backend().capacity).unwrap());
    serves(&rt);
}

// --- 4. try_* never blocks ---

/// `Batch::try_submit` returns within milliseconds while another thread holds a reservation
/// open, and while another producer waits for room behind hung tasks.
pub fn try_submit_never_blocks(make: Make) {
    let rt = make
        .with(|c| {
            c.capacity = 64;
            c.shutdown_timeout = Duration::from_millis(300);
        })
        .unwrap();
    let quick = |what: &str| {
        let start = Instant::now();
        let r = rt.batch(&[Task::noop(7)]).try_submit();
        assert!(start.elapsed() < Duration::from_millis(50), "{what}: try_submit took {:?}", start.elapsed());
        r
    };
    let (held, release) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut r = rt.reserve(4).unwrap();
            r.push(Task::noop(1)).unwrap();
            held.wait();
            release.wait();
            r.commit().unwrap().wait().unwrap();
        });
        held.wait();
        let t = quick("behind an open reservation");
        release.wait();
        if let Ok(t) = t {
            t.wait().unwrap();
        }
    });
    // A ring full of hung tasks, and a producer waiting for room.
    // Hung tasks at the front of the ring (as many as there are workers, at most half
    // the ring), then a batch that needs the whole ring: its producer waits for room.
    let workers = (rt.backend().workers as usize).min(32);
    let hung: Vec<Task> = (0..workers).map(|_| Task::hang()).collect();
    let _h = rt.submit(&hung).unwrap();
    let fill: Vec<Task> = (0..64).map(Task::noop).collect();
    std::thread::scope(|s| {
        s.spawn(|| {
            let _ = rt.submit(&fill);
        });
        std::thread::sleep(Duration::from_millis(50));
        for _ in 0..20 {
            let r = quick("beside a producer waiting for room");
            assert!(matches!(r, Err(Error::QueueFull | Error::WouldBlock)), "{r:?}");
        }
        let r = rt.close();
        assert!(matches!(r, Ok(()) | Err(Error::Timeout)), "{r:?}");
    });
}

/// A batch larger than the ring can never fit: `Batch::try_submit` says so with its own error
/// (not `QueueFull`, which invites a retry that cannot succeed); `submit` feeds it in.
pub fn try_submit_larger_than_ring(make: Make) {
    let rt = make.with(|c| c.capacity = 64).unwrap();
    let big: Vec<Task> = (0..100).map(Task::noop).collect();
    assert_eq!(rt.batch(&big).try_submit().err(), Some(Error::ExceedsQueue { len: 100, capacity: 64 }));
    rt.submit(&big).unwrap().wait().unwrap();
}

// --- 5. Any number of waiters on one ticket ---

/// Blocking waits, futures, futures polled with changing wakers and futures dropped
/// midway, all on one ticket: every one that stays is woken.
pub fn many_waiters_one_ticket(make: Make) {
    use futures::FutureExt;
    use std::task::{Context, Poll};
    let rt = make.with(|c| c.async_spin = Duration::ZERO).unwrap();
    let t = rt.submit(&[Task::spin(150_000_000)]).unwrap();
    std::thread::scope(|s| {
        for _ in 0..6 {
            s.spawn(|| assert_eq!(t.wait(), Ok(())));
        }
        for _ in 0..6 {
            s.spawn(|| assert_eq!(futures::executor::block_on(t.wait_async()), Ok(())));
        }
        for k in 0..6 {
            let t = &t;
            s.spawn(move || {
                let mut f = t.wait_async();
                for _ in 0..k {
                    let w = futures::task::noop_waker();
                    assert!(f.poll_unpin(&mut Context::from_waker(&w)).is_pending());
                }
                if k % 2 == 1 {
                    drop(f);
                    assert_eq!(t.wait(), Ok(()));
                } else {
                    assert_eq!(futures::executor::block_on(f), Ok(()));
                }
            });
        }
    });
    let mut late = t.wait_async();
    assert_eq!(late.poll_unpin(&mut Context::from_waker(&futures::task::noop_waker())), Poll::Ready(Ok(())));
}

// --- 6. close / shutdown from several threads ---

/// Four threads close at once while a drain runs: each returns only once every task
/// has run, and all with the same outcome.
pub fn close_races_close(make: Make) {
    let rt = make.rt();
    let workers = rt.backend().workers as usize;
    let tasks: Vec<Task> = (0..workers * 4).map(|_| Task::spin(30_000_000)).collect();
    let t = rt.submit(&tasks).unwrap();
    let outcomes: Vec<resident::Result<()>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let r = rt.close();
                    let done = t.try_wait();
                    assert!(
                        matches!(done, Some(Ok(()))),
                        "close returned {r:?} before the drain ended: {done:?}; {:?}",
                        rt.metrics().residency
                    );
                    r
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(outcomes.iter().all(|o| *o == outcomes[0]), "{outcomes:?}");
    assert_eq!(outcomes[0], Ok(()));
}

// --- 7. Failure during construction ---

/// Threads of this process (Linux: /proc/self/status).
pub fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Threads:").map(|v| v.trim().parse().unwrap_or(0))))
        .unwrap_or(0)
}

/// A runtime whose start fails leaves no thread behind, and a retry works: on the CPU
/// backend too many workers, or a worker that cannot start (the first, the second, the
/// fourth: those started before it must be stopped and joined before the queue memory
/// goes); on CUDA a device that does not exist, a ring the config refuses.
pub fn construction_failure_cleans_up(make: Make) {
    // The first runtime of the process starts the driver's own threads (CUDA).
    let cpu = make.rt().backend().kind == BackendKind::Cpu;
    let before = threads();
    for workers in [100_000usize, usize::MAX] {
        match make.with(|c| c.cpu_workers = workers) {
            Err(Error::Config(_)) => {}
            Ok(rt) => serves(&rt),
            Err(e) => panic!("{e:?}"),
        }
    }
    if cpu {
        for fail_at in [0usize, 1, 3] {
            let r = make.with(|c| {
                c.cpu_workers = 4;
                c.fail_worker_start = Some(fail_at);
            });
            assert!(matches!(r, Err(Error::Config(_))), "{r:?}");
        }
    } else {
        let r = make.with(|c| c.device = 4096);
        assert!(matches!(r, Err(Error::NoDevice | Error::Driver { .. })), "{r:?}");
    }
    let r = make.with(|c| c.capacity = 3);
    assert!(matches!(r, Err(Error::Config(_))), "{r:?}");
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(threads(), before, "threads left behind by failed starts");
    serves(&make.rt());
}

// --- 8. Task lists checked at every submit ---

/// A task list naming a dropped buffer or counter, by any kind of task in it (its
/// header, its declared slices, the slices of the tasks it spawns), is refused.
pub fn list_rechecked_each_submit(make: Make) {
    let rt = make.rt();
    let c = rt.counter().unwrap();
    let signals = rt.upload_tasks(&[Task::noop(0).signals(c.id())]).unwrap();
    let waits = rt.upload_tasks(&[Task::noop(0).after(c.id(), 0)]).unwrap();
    signals.submit().unwrap().wait().unwrap();
    drop(c);
    assert!(bad_counter(signals.submit()));
    assert!(bad_counter(waits.submit()));
    let marks = rt.buffer::<u32>(Task::tree_nodes(2, 3).unwrap() as usize).unwrap();
    let tree = rt.upload_tasks(&[Task::tree(marks.all(), 0, 2, 3)]).unwrap();
    tree.submit().unwrap().wait().unwrap();
    drop(marks);
    assert!(bad_buffer(tree.submit()));
    serves(&rt);
}

// --- 10. Nothing works after close that should not ---

pub fn nothing_after_close(make: Make) {
    let rt = make.rt();
    let b = rt.buffer_from(&[1.0f32; 4]).unwrap();
    let list = rt.upload_tasks(&[Task::noop(0)]).unwrap();
    rt.close().unwrap();
    assert_eq!(rt.buffer::<f32>(4).err(), Some(Error::ShutDown));
    assert_eq!(rt.buffer_from(&[1u32]).err(), Some(Error::ShutDown));
    assert_eq!(rt.counter().err(), Some(Error::ShutDown));
    assert_eq!(rt.upload_tasks(&[Task::noop(0)]).err(), Some(Error::ShutDown));
    assert_eq!(rt.reserve(1).err(), Some(Error::ShutDown));
    assert_eq!(rt.submit(&[Task::noop(0)]).err(), Some(Error::ShutDown));
    assert_eq!(rt.batch(&[Task::noop(0)]).try_submit().err(), Some(Error::ShutDown));
    assert_eq!(list.submit().err(), Some(Error::ShutDown));
    // What was made before stays readable: its memory lives until its last owner goes.
    assert_eq!(b.read().unwrap(), vec![1.0; 4]);
    assert_eq!(rt.close(), Ok(()));
}

/// A read of a buffer waits for the tasks in flight that write it.
pub fn read_waits_for_writers(make: Make) {
    let rt = make.rt();
    let x = rt.buffer_from(&[1.0f32; 256]).unwrap();
    let y = rt.buffer_from(&[1.0f32; 256]).unwrap();
    let c = rt.counter().unwrap();
    let _t = rt.submit(&[Task::spin(30_000_000).signals(c.id()), Task::axpy(2.0, x.all(), y.all()).after(c.id(), 1)]).unwrap();
    assert_eq!(y.read().unwrap(), vec![3.0; 256], "the read did not wait for the axpy in flight");
}

// --- 10. No single task wedges the runtime ---

/// A task waiting on a counter that nothing signals yet holds a worker, not the
/// runtime: batches submitted after it complete and their tickets resolve (in any
/// order), until the signal comes and the waiting task runs too. (Up to a ring's worth
/// of tasks: a slot is reused only once every task before it completed.)
pub fn waiting_task_does_not_wedge(make: Make) {
    let rt = make.rt();
    let c = rt.counter().unwrap();
    let waiting = rt.batch(&[Task::noop(5).after(c.id(), 1)]).results().submit().unwrap();
    let start = Instant::now();
    let rounds = (rt.backend().capacity as u64 - 64) / 10;
    for round in 0..rounds {
        let tasks: Vec<Task> = (0..10).map(|i| Task::noop(round * 10 + i)).collect();
        let t = rt.batch(&tasks).results().submit().unwrap();
        assert_eq!(t.results().unwrap(), (round * 10..round * 10 + 10).collect::<Vec<_>>(), "round {round}");
    }
    assert!(start.elapsed() < Duration::from_secs(10), "unrelated work crawled: {:?}", start.elapsed());
    assert!(waiting.try_wait().is_none(), "the waiting task ran without its signal");
    rt.submit(&[Task::noop(0).signals(c.id())]).unwrap().wait().unwrap();
    assert_eq!(waiting.results().unwrap(), vec![5]);
    serves(&rt);
}

/// A ticket can be cancelled: its task waiting on a counter nothing signals and its
/// task that never ends on its own (a spin that polls) end at once with
/// `Status::Cancelled`; the runtime serves on, and closes without a timeout.
pub fn cancel_ends_waiting_and_polling_tasks(make: Make) {
    use resident::Status;
    // Two workers held (CPU): two more serve meanwhile.
    let rt = make.with(|c| c.cpu_workers = 4).unwrap();
    let c = rt.counter().unwrap();
    let waiting = rt.submit(&[Task::noop(1).after(c.id(), 1)]).unwrap();
    let hung = rt.submit(&[Task::hang()]).unwrap();
    serves(&rt);
    for t in [&waiting, &hung] {
        assert!(t.try_wait().is_none());
        let start = Instant::now();
        t.cancel().unwrap();
        let r = t.wait_timeout(Duration::from_secs(10));
        assert!(matches!(r, Err(Error::TaskFailed { status: Status::Cancelled, .. })), "{r:?}");
        assert!(start.elapsed() < Duration::from_secs(2), "cancel took {:?}", start.elapsed());
    }
    // Cancelling a finished ticket changes nothing.
    let done = rt.submit(&[Task::noop(2)]).unwrap();
    done.wait().unwrap();
    done.cancel().unwrap();
    assert_eq!(done.wait(), Ok(()));
    serves(&rt);
    let start = Instant::now();
    assert_eq!(rt.close(), Ok(()));
    assert!(start.elapsed() < Duration::from_secs(2));
}

/// Dropping a counter that a task waits on fails that task at once
/// (`Status::CounterDropped`: no signal would come), and the drop itself returns at
/// once; so do drops of buffers and lists while a task that never ends runs (their
/// memory is freed once nothing can use it).
pub fn drops_never_wait(make: Make) {
    use resident::Status;
    let rt = make.with(|c| c.cpu_workers = 4).unwrap();
    let c = rt.counter().unwrap();
    let waiting = rt.submit(&[Task::noop(1).after(c.id(), 1)]).unwrap();
    let hung = rt.submit(&[Task::hang()]).unwrap();
    let quick = |what: &str, f: &dyn Fn()| {
        let start = Instant::now();
        f();
        assert!(start.elapsed() < Duration::from_millis(200), "dropping {what} took {:?}", start.elapsed());
    };
    quick("a counter a task waits on", &|| drop(rt.counter().unwrap()));
    let c = std::cell::Cell::new(Some(c));
    quick("a counter a task waits on", &|| drop(c.take()));
    let r = waiting.wait_timeout(Duration::from_secs(10));
    assert!(matches!(r, Err(Error::TaskFailed { status: Status::CounterDropped, .. })), "{r:?}");
    let b = std::cell::Cell::new(Some(rt.buffer_from(&[1.0f32; 1024]).unwrap()));
    let l = std::cell::Cell::new(Some(rt.upload_tasks(&[Task::noop(3)]).unwrap()));
    quick("a buffer behind a hung task", &|| drop(b.take()));
    quick("a task list behind a hung task", &|| drop(l.take()));
    // New counters, buffers and lists still come, and the runtime serves.
    let c2 = rt.counter().unwrap();
    rt.submit(&[Task::noop(0).signals(c2.id())]).unwrap().wait().unwrap();
    assert_eq!(c2.value().unwrap(), 1);
    serves(&rt);
    // Waiting for everything submitted is bounded when asked to be.
    assert_eq!(rt.wait_idle_timeout(Duration::from_millis(50)), Err(Error::Timeout));
    hung.cancel().unwrap();
    assert!(matches!(hung.wait(), Err(Error::TaskFailed { status: Status::Cancelled, .. })));
    assert_eq!(rt.wait_idle(), Ok(()));
    assert_eq!(rt.close(), Ok(()));
}

// --- 9. Tasks that spawn tasks never fail for lack of room that the CPU has ---

/// Trees of tens of thousands of nodes in all run whole, exactly once each, on the
/// default spawn ring (more slots than nodes: no push can find it full). On a ring far
/// smaller than the children in flight, pushes wait for room while others pop (bounded
/// backpressure); if every worker is pushing, the wait ends with a typed `QueueFull`
/// and nothing runs twice or without its parent.
pub fn large_trees_complete(make: Make) {
    use resident::Status;
    let (depth, fanout) = (4, 8);
    let nodes = Task::tree_nodes(depth, fanout).unwrap() as usize;
    for (trees, spawn_capacity) in [(16usize, None), (8, Some(256u32))] {
        let rt = make
            .with(|c| {
                if let Some(s) = spawn_capacity {
                    c.spawn_capacity = s;
                }
            })
            .unwrap();
        let marks = rt.buffer_from(&vec![0u32; trees * nodes]).unwrap();
        let roots: Vec<Task> = (0..trees).map(|t| Task::tree(marks.slice(t * nodes..(t + 1) * nodes), 0, depth, fanout)).collect();
        let r = rt.submit(&roots).unwrap().wait();
        let got = marks.read().unwrap();
        match (r, spawn_capacity) {
            (Ok(()), _) => assert!(got.iter().all(|&v| v == 1), "a node ran twice or not at all"),
            (Err(Error::TaskFailed { status: Status::QueueFull | Status::ChildFailed, .. }), Some(_)) => {
                for (t, tree) in got.chunks(nodes).enumerate() {
                    assert_eq!(tree[0], 1, "root {t} ran");
                    for (i, &v) in tree.iter().enumerate().skip(1) {
                        assert!(
                            v == 0 || (v == 1 && tree[(i - 1) / fanout as usize] == 1),
                            "tree {t}: node {i} ran twice or without its parent"
                        );
                    }
                }
            }
            (r, _) => panic!("{trees} trees of {nodes} nodes, spawn ring {spawn_capacity:?}: {r:?}"),
        }
        rt.close().unwrap();
    }
}

/// Large batches (validated and staged on the runtime's helper threads) waiting for
/// room behind a task that waits on a counter hold no helper: another large batch is
/// validated meanwhile, a buffer drop returns at once, and dropping the counter (which
/// ends the waiting task) lets everything finish; close is bounded (found in review:
/// a helper waiting for room held another batch's validation under the registries'
/// read lock, and a drop, then close, blocked without limit).
pub fn large_batches_do_not_hold_the_helpers(make: Make) {
    use resident::Status;
    let rt = make.with(|c| c.submit_threads = 4).unwrap();
    let cap = rt.backend().capacity;
    let c = rt.counter().unwrap();
    let waiting = rt.submit(&[Task::noop(1).after(c.id(), 1)]).unwrap();
    let big: Vec<Task> = (0..(cap * 2).max(8192) as u64).map(Task::noop).collect();
    let other: Vec<Task> = (0..4096u64).map(Task::noop).collect();
    let c = std::cell::Cell::new(Some(c));
    std::thread::scope(|s| {
        let a = s.spawn(|| rt.submit(&big).map(|t| t.wait()));
        std::thread::sleep(Duration::from_millis(100));
        let b = s.spawn(|| rt.submit(&other).map(|t| t.wait()));
        std::thread::sleep(Duration::from_millis(100));
        let start = Instant::now();
        drop(rt.buffer_from(&[1.0f32; 16]).unwrap());
        assert!(start.elapsed() < Duration::from_secs(1), "a buffer drop took {:?}", start.elapsed());
        let start = Instant::now();
        drop(c.take());
        assert!(start.elapsed() < Duration::from_secs(1), "a counter drop took {:?}", start.elapsed());
        let r = waiting.wait_timeout(Duration::from_secs(20));
        assert!(matches!(r, Err(Error::TaskFailed { status: Status::CounterDropped, .. })), "{r:?}");
        assert_eq!(a.join().unwrap(), Ok(Ok(())));
        assert_eq!(b.join().unwrap(), Ok(Ok(())));
    });
    let start = Instant::now();
    assert_eq!(rt.close(), Ok(()));
    assert!(start.elapsed() < Duration::from_secs(5));
}

/// A thread that holds an open reservation gets `ReservationOpen` from whatever would
/// wait for it (close, a wait for a ticket after it, waiting for everything), not a
/// wait for itself; a buffer made after the reservation opened, and written by one of
/// its tasks, is read only after that task ran (found in review: both waited, or the
/// read did not).
pub fn open_reservation_waits_refused(make: Make) {
    let rt = make.with(|c| c.cpu_workers = 4).unwrap();
    let mut r = rt.reserve(2).unwrap();
    let x = rt.buffer_from(&[1.0f32; 64]).unwrap();
    let y = rt.buffer_from(&[1.0f32; 64]).unwrap();
    let c = rt.counter().unwrap();
    r.push(Task::axpy(2.0, x.all(), y.all()).after(c.id(), 1)).unwrap();
    let later = std::thread::scope(|s| s.spawn(|| rt.submit(&[Task::noop(3)]).unwrap()).join().unwrap());
    let quick = |what: &str, got: resident::Result<()>| {
        assert_eq!(got, Err(Error::ReservationOpen), "{what}");
    };
    quick("close", rt.close());
    quick("a wait for a later ticket", later.wait());
    quick("a future of a later ticket", futures::executor::block_on(later.wait_async()));
    quick("wait_idle", rt.wait_idle());
    quick("a read", y.read().map(|_| ()));
    let t = r.commit().unwrap();
    later.wait().unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(30));
            rt.submit(&[Task::noop(0).signals(c.id())]).unwrap().wait().unwrap();
        });
        // Waits for the axpy, which waits for the signal.
        let got = y.read().unwrap();
        assert_eq!(got, vec![3.0; 64], "the reservation's ticket then: {:?}; {:?}", t.try_wait(), rt.metrics().residency);
    });
    t.wait().unwrap();
    assert_eq!(rt.close(), Ok(()));
}

/// After a fault (here the watchdog: a hung task that does poll abort), host accesses
/// and waits answer the fault, not `Ok` while a task may still write.
pub fn reads_after_a_fault_answer_it(make: Make) {
    let rt = make.with(|c| c.task_deadline = Some(Duration::from_millis(200))).unwrap();
    let y = rt.buffer_from(&[1.0f32; 16]).unwrap();
    let hung = rt.submit(&[Task::hang()]).unwrap();
    let r = hung.wait_timeout(Duration::from_secs(20));
    assert!(matches!(r, Err(Error::TaskHung { .. })), "{r:?}");
    assert!(matches!(y.read(), Err(Error::TaskHung { .. })));
    assert!(matches!(rt.wait_idle(), Err(Error::TaskHung { .. })));
    assert!(matches!(rt.submit(&[Task::noop(0)]), Err(Error::TaskHung { .. })));
}
