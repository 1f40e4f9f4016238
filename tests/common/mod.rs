//! Scenarios run on both backends: `tests/cpu.rs` (CI) and `tests/gpu.rs` (on a GPU,
//! `--include-ignored`); `streams` those of the stream API (`tests/streams_cpu.rs`,
//! `tests/streams_gpu.rs`). Each takes a fresh runtime, draws fresh random inputs, and
//! checks against a reference computed on the host in f64.
#![allow(dead_code)]

pub mod faults;
pub mod hostile;
pub mod isolate;
pub mod leaks;
pub mod multi;
pub mod residency;
pub mod soak;
pub mod streams;
pub mod stress;
pub mod timeout;

use rand::Rng;
use resident::{Error, Rejection, Runtime, Status, Task};
use std::time::{Duration, Instant};

/// Every task runs exactly once: `producers` threads each submit `per_producer` mark
/// tasks (in batches of `batch`, interleaved with tagged noops whose results are
/// checked), each naming its own counter; afterwards every counter is exactly 1.
pub fn exactly_once_many_producers(rt: &Runtime, producers: usize, per_producer: usize, batch: usize) {
    let n = producers * per_producer;
    let counters = rt.buffer_from(&vec![0u32; n]).unwrap();
    let before = rt.metrics().completed;
    std::thread::scope(|s| {
        for p in 0..producers {
            let (rt, counters) = (&rt, &counters);
            s.spawn(move || {
                let mut tickets = vec![];
                let ids: Vec<usize> = (p * per_producer..(p + 1) * per_producer).collect();
                for chunk in ids.chunks(batch) {
                    let mut tasks = Vec::with_capacity(2 * chunk.len());
                    for &i in chunk {
                        tasks.push(Task::mark(counters.all(), i as u32));
                        tasks.push(Task::noop((i as u64) << 20 | 0xabc));
                    }
                    tickets.push((chunk.to_vec(), rt.batch(&tasks).results().submit().unwrap()));
                }
                for (chunk, t) in tickets {
                    let r = t.results().unwrap();
                    assert_eq!(r.len(), 2 * chunk.len());
                    for (k, &i) in chunk.iter().enumerate() {
                        // A mark's result is the counter before it: 0 when it ran once.
                        assert_eq!(r[2 * k], 0, "mark {i} saw a counter already set");
                        assert_eq!(r[2 * k + 1], (i as u64) << 20 | 0xabc, "noop tag of task {i}");
                    }
                }
            });
        }
    });
    let got = counters.read().unwrap();
    let bad: Vec<_> = got.iter().enumerate().filter(|(_, c)| **c != 1).take(10).collect();
    assert!(bad.is_empty(), "counters not exactly 1: {bad:?}");
    assert_eq!(rt.metrics().completed - before, 2 * n as u64);
}

/// Producers streaming small batches, each with a few tickets in flight and waiting for
/// the oldest (as the streaming bench does): every task runs exactly once and every
/// wait ends. Tickets are registered outside the producer lock, so they may reach the
/// completion tracker out of order, and a waiter settles its own ticket from its
/// records: a ticket done behind one not registered yet must not be taken for the
/// prefix (a bug of this kind hung eight producers x 256). Beside them, two threads
/// submit empty batches, whose tickets `[x, x)` share their start with the next
/// batch's (one registered after that batch moved the prefix back, for good, in a
/// first version of the tracker).
pub fn streamed_batches_many_producers(rt: &Runtime, producers: usize, batches: usize, batch: usize) {
    const IN_FLIGHT: usize = 8;
    let n = producers * batches * batch;
    let counters = rt.buffer_from(&vec![0u32; n]).unwrap();
    let left = std::sync::atomic::AtomicUsize::new(producers);
    std::thread::scope(|s| {
        for _ in 0..2 {
            let (rt, left) = (&rt, &left);
            s.spawn(move || {
                while left.load(std::sync::atomic::Ordering::Relaxed) > 0 {
                    rt.submit(&[]).unwrap().wait_timeout(Duration::from_secs(30)).expect("an empty batch's wait that never ended");
                    std::thread::sleep(Duration::from_micros(20));
                }
            });
        }
        for p in 0..producers {
            let (rt, counters, left) = (&rt, &counters, &left);
            s.spawn(move || {
                // Counted out also when this thread's wait fails (the empty batches'
                // threads then end, and the test fails instead of hanging).
                struct Leave<'a>(&'a std::sync::atomic::AtomicUsize);
                impl Drop for Leave<'_> {
                    fn drop(&mut self) {
                        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                let _leave = Leave(left);
                let mut q = std::collections::VecDeque::new();
                for b in 0..batches {
                    let at = (p * batches + b) * batch;
                    let tasks: Vec<Task> = (at..at + batch).map(|i| Task::mark(counters.all(), i as u32)).collect();
                    q.push_back(rt.submit(&tasks).unwrap());
                    if q.len() > IN_FLIGHT {
                        q.pop_front().unwrap().wait_timeout(Duration::from_secs(30)).expect("a wait that never ended");
                    }
                }
                q.into_iter().for_each(|t| t.wait_timeout(Duration::from_secs(30)).expect("a wait that never ended"));
            });
        }
    });
    let got = counters.read().unwrap();
    let bad: Vec<_> = got.iter().enumerate().filter(|(_, c)| **c != 1).take(10).collect();
    assert!(bad.is_empty(), "counters not exactly 1: {bad:?}");
}

/// Axpy over `tasks` slices of `slice` floats with random inputs; output checked
/// element by element against the f64 reference (an unwritten element keeps `y`,
/// which differs from the reference since alpha and x are nonzero).
pub fn axpy_matches_reference(rt: &Runtime, tasks: usize, slice: usize) {
    let mut rng = rand::rng();
    let n = tasks * slice;
    let alpha: f32 = rng.random_range(0.5..2.0) * if rng.random() { 1.0 } else { -1.0 };
    let xs: Vec<f32> = (0..n).map(|_| rng.random_range(0.1..1.0) * if rng.random() { 1.0 } else { -1.0 }).collect();
    let ys: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let x = rt.buffer_from(&xs).unwrap();
    let y = rt.buffer_from(&ys).unwrap();
    let list: Vec<Task> =
        (0..tasks).map(|i| Task::axpy(alpha, x.slice(i * slice..(i + 1) * slice), y.slice(i * slice..(i + 1) * slice))).collect();
    let results = rt.batch(&list).results().submit().unwrap().results().unwrap();
    assert!(results.iter().all(|&r| r == slice as u64), "axpy results report the slice length");
    let out = y.read().unwrap();
    let (mut err2, mut ref2) = (0f64, 0f64);
    for i in 0..n {
        let (ax, yv) = (alpha as f64 * xs[i] as f64, ys[i] as f64);
        let r = ax + yv;
        // fp32: at most two roundings (multiply, add), each within 2^-24 of its operands.
        let bound = 2.0 * f32::EPSILON as f64 * (ax.abs() + yv.abs());
        assert!((out[i] as f64 - r).abs() <= bound, "element {i}: got {}, want {r} (alpha {alpha}, x {}, y {})", out[i], xs[i], ys[i]);
        err2 += (out[i] as f64 - r).powi(2);
        ref2 += r * r;
    }
    eprintln!("axpy: {tasks} tasks x {slice} floats, relative error {:.2e}", (err2 / ref2).sqrt());
}

/// Odd lengths and offsets take the scalar and remainder paths of axpy.
pub fn axpy_odd_shapes(rt: &Runtime) {
    let mut rng = rand::rng();
    let n = 10_000;
    let xs: Vec<f32> = (0..n).map(|_| rng.random_range(0.1..1.0)).collect();
    let ys: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let x = rt.buffer_from(&xs).unwrap();
    let y = rt.buffer_from(&ys).unwrap();
    let mut expect: Vec<f64> = ys.iter().map(|&v| v as f64).collect();
    let mut tasks = vec![];
    let mut at = 0;
    for len in [1usize, 3, 4, 5, 31, 33, 127, 128, 129, 1000, 1023, 1025, 4099] {
        let off = at + 1; // misaligned on purpose
        if off + len > n {
            break;
        }
        tasks.push(Task::axpy(1.5, x.slice(off..off + len), y.slice(off..off + len)));
        for i in off..off + len {
            expect[i] += 1.5 * xs[i] as f64;
        }
        at = off + len;
    }
    rt.submit(&tasks).unwrap().wait().unwrap();
    let out = y.read().unwrap();
    for i in 0..n {
        assert!((out[i] as f64 - expect[i]).abs() <= 4.0 * f32::EPSILON as f64 * (1.5 * xs[i] as f64 + ys[i].abs() as f64), "element {i}");
    }
}

/// Invalid tasks are refused with a typed error, and nothing of their batch runs.
pub fn invalid_tasks_rejected(rt: &Runtime) {
    let x = rt.buffer_from(&[1.0f32; 64]).unwrap();
    let y = rt.buffer_from(&[1.0f32; 64]).unwrap();
    let c = rt.buffer_from(&[0u32; 8]).unwrap();
    let probe = rt.submit(&[Task::noop(1)]).unwrap();
    probe.wait().unwrap();
    let next = probe.first_seq() + 1;

    type Expect = Box<dyn Fn(&Rejection) -> bool>;
    let cases: Vec<(Task, Expect)> = vec![
        (Task::raw(0, [0; 12]), Box::new(|r| matches!(r, Rejection::UnknownTask(resident::TaskId(0))))),
        (Task::raw(0xdead, [0; 12]), Box::new(|r| matches!(r, Rejection::UnknownTask(resident::TaskId(0xdead))))),
        (Task::terminate(), Box::new(|r| matches!(r, Rejection::ReservedTask(_)))),
        // `flags` carries the building type's tag until submission: another value is
        // another type's record.
        (Task { flags: Task::noop(0).flags ^ 1, ..Task::noop(0) }, Box::new(|r| matches!(r, Rejection::ForeignType(resident::TaskId(1))))),
        (Task { seg: 1, ..Task::noop(0) }, Box::new(|r| matches!(r, Rejection::NonZeroReserved))),
        (
            Task::axpy(1.0, x.all().with_offset(60), y.all()),
            Box::new(|r| matches!(r, Rejection::OutOfRange { arg: 0, offset: 60, len: 64 })),
        ),
        (
            Task::axpy(1.0, x.slice(0..32), y.all().with_offset(u32::MAX).with_len(32)),
            Box::new(|r| matches!(r, Rejection::OutOfRange { arg: 1, .. })),
        ),
        (Task::axpy(1.0, x.slice(0..32), y.slice(0..16)), Box::new(|r| matches!(r, Rejection::LengthMismatch(32, 16)))),
        // A u32 buffer named as f32 (the types forbid it; a forged slice does it).
        (
            Task::axpy(1.0, resident::Slice::new(c.all().handle, 0, 8), y.slice(0..8)),
            Box::new(|r| matches!(r, Rejection::BadBuffer { arg: 0, .. })),
        ),
        (Task::mark(c.all(), 8), Box::new(|r| matches!(r, Rejection::IndexOutOfRange { index: 8, len: 8 }))),
        (
            Task::mark(resident::Slice::new(resident::BufferHandle(0x7777_0123), 0, 1), 0),
            Box::new(|r| matches!(r, Rejection::BadBuffer { arg: 0, .. })),
        ),
    ];
    for (i, (bad, ok)) in cases.iter().enumerate() {
        // The bad task sits in the middle of a valid batch: nothing of it may run.
        let batch = [Task::mark(c.all(), 0), *bad, Task::mark(c.all(), 1)];
        match rt.submit(&batch) {
            Err(Error::InvalidTask { index: 1, reason }) => assert!(ok(&reason), "case {i}: wrong reason {reason:?}"),
            other => panic!("case {i}: expected InvalidTask at index 1, got {other:?}"),
        }
    }
    // A stale handle: the buffer is gone.
    let gone = rt.buffer_from(&[0.0f32; 8]).unwrap();
    let stale = gone.all();
    drop(gone);
    assert!(matches!(
        rt.submit(&[Task::axpy(1.0, stale, stale)]),
        Err(Error::InvalidTask { index: 0, reason: Rejection::BadBuffer { .. } })
    ));

    assert_eq!(probe.results(), Err(Error::NoResults));
    let after = rt.submit(&[Task::noop(2)]).unwrap();
    assert_eq!(after.first_seq(), next, "a refused batch must not consume sequence numbers");
    after.wait().unwrap();
    assert_eq!(c.read().unwrap(), vec![0; 8], "no task of a refused batch may run");
}

/// Shutdown with work queued drains it: every ticket completes successfully.
pub fn shutdown_drains_queued_tasks(rt: Runtime, spin: Duration, count: usize) {
    let c = rt.buffer_from(&vec![0u32; count]).unwrap();
    let mut tickets = vec![];
    for i in 0..count {
        tickets.push(rt.submit(&[Task::spin(spin.as_nanos() as u64), Task::mark(c.all(), i as u32)]).unwrap());
    }
    let start = Instant::now();
    rt.close().unwrap();
    for t in &tickets {
        assert_eq!(t.try_wait(), Some(Ok(())), "drained ticket");
    }
    assert!(c.read().unwrap().iter().all(|&v| v == 1));
    assert!(matches!(rt.submit(&[Task::noop(0)]), Err(Error::ShutDown)));
    eprintln!("shutdown drained {count} queued spin tasks in {:?}", start.elapsed());
}

/// Shutdown that cannot drain in time aborts: it returns Timeout within a bound, and
/// every unfinished ticket resolves with an error instead of hanging.
pub fn shutdown_aborts_after_timeout(rt: Runtime, workers_hint: usize) {
    let long = Task::spin(60_000_000_000); // one minute per task
    let tickets: Vec<_> = (0..workers_hint * 2).map(|_| rt.submit(&[long]).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(50));
    let start = Instant::now();
    let r = rt.shutdown();
    let took = start.elapsed();
    assert_eq!(r, Err(Error::Timeout));
    assert!(took < Duration::from_secs(10), "shutdown took {took:?}");
    for t in &tickets {
        match t.wait_timeout(Duration::from_secs(1)) {
            Err(Error::ShutDown) | Err(Error::TaskFailed { status: Status::Aborted, .. }) => {}
            other => panic!("ticket after abort: {other:?}"),
        }
    }
}

/// Producers still submitting while another thread closes the runtime get ShutDown;
/// every ticket they did get completes; nothing hangs.
pub fn close_while_producers_submit(rt: &Runtime, producers: usize) {
    let c = rt.buffer_from(&[0u32; 1]).unwrap();
    let accepted = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..producers {
            s.spawn(|| {
                loop {
                    match rt.submit(&[Task::noop(1), Task::mark(c.all(), 0)]) {
                        Ok(t) => {
                            t.wait().unwrap();
                            accepted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        Err(Error::ShutDown) => break,
                        Err(e) => panic!("unexpected {e:?}"),
                    }
                }
            });
        }
        std::thread::sleep(Duration::from_millis(100));
        rt.close().unwrap();
    });
    let n = accepted.load(std::sync::atomic::Ordering::Relaxed);
    assert!(n > 0);
    assert_eq!(c.read().unwrap()[0] as u64, n, "each accepted mark ran once");
}

/// try_submit refuses with QueueFull when the ring is full, and nothing is lost.
pub fn queue_full_backpressure(rt: &Runtime, spin: Duration) {
    let cap = rt.backend().capacity;
    let c = rt.buffer_from(&vec![0u32; cap]).unwrap();
    // Fill the ring with slow tasks.
    let slow: Vec<Task> =
        (0..cap).map(|i| if i % 2 == 0 { Task::spin(spin.as_nanos() as u64) } else { Task::mark(c.all(), i as u32) }).collect();
    let t = rt.submit(&slow).unwrap();
    match rt.batch(&[Task::noop(0); 8]).try_submit() {
        Err(Error::QueueFull) => {}
        other => panic!("expected QueueFull, got {other:?}"),
    }
    // Blocking submit waits for room instead.
    let t2 = rt.submit(&(0..cap / 2).map(|i| Task::mark(c.all(), (2 * i) as u32)).collect::<Vec<_>>()).unwrap();
    t.wait().unwrap();
    t2.wait().unwrap();
    assert!(c.read().unwrap().iter().all(|&v| v == 1), "every slot marked exactly once");
}

/// wait_timeout gives up with Timeout; the task still completes later.
pub fn wait_timeout_expires(rt: &Runtime) {
    let t = rt.submit(&[Task::spin(300_000_000)]).unwrap();
    assert_eq!(t.wait_timeout(Duration::from_millis(20)), Err(Error::Timeout));
    assert_eq!(t.try_wait(), None);
    t.wait().unwrap();
}

/// Batches larger than the ring are fed in as space frees up.
pub fn batch_larger_than_ring(rt: &Runtime) {
    let n = rt.backend().capacity * 3 + 17;
    let c = rt.buffer_from(&vec![0u32; n]).unwrap();
    let tasks: Vec<Task> = (0..n).map(|i| Task::mark(c.all(), i as u32)).collect();
    rt.submit(&tasks).unwrap().wait().unwrap();
    assert!(c.read().unwrap().iter().all(|&v| v == 1));
}

/// A resident task list replays the same work: submitted twice, y = y0 + 2·alpha·x; a
/// list that names a buffer dropped since upload is refused.
pub fn resident_list_replays(rt: &Runtime, tasks: usize, slice: usize) {
    let mut rng = rand::rng();
    let n = tasks * slice;
    let alpha: f32 = rng.random_range(0.5..2.0);
    let xs: Vec<f32> = (0..n).map(|_| rng.random_range(0.1..1.0)).collect();
    let ys: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let x = rt.buffer_from(&xs).unwrap();
    let y = rt.buffer_from(&ys).unwrap();
    let list = rt
        .upload_tasks(
            &(0..tasks)
                .map(|i| Task::axpy(alpha, x.slice(i * slice..(i + 1) * slice), y.slice(i * slice..(i + 1) * slice)))
                .collect::<Vec<_>>(),
        )
        .unwrap();
    assert_eq!(list.len(), tasks);
    list.submit().unwrap().wait().unwrap();
    list.submit().unwrap().wait().unwrap();
    let out = y.read().unwrap();
    for i in 0..n {
        let (ax, yv) = (alpha as f64 * xs[i] as f64, ys[i] as f64);
        let r = 2.0 * ax + yv;
        assert!((out[i] as f64 - r).abs() <= 4.0 * f32::EPSILON as f64 * (2.0 * ax.abs() + yv.abs()), "element {i}: {} vs {r}", out[i]);
    }
    let doomed = rt.buffer_from(&[0u32; 4]).unwrap();
    let list2 = rt.upload_tasks(&[Task::mark(doomed.all(), 3)]).unwrap();
    list2.submit().unwrap().wait().unwrap();
    assert_eq!(doomed.read().unwrap(), vec![0, 0, 0, 1]);
    drop(doomed);
    assert!(matches!(list2.submit(), Err(Error::InvalidTask { reason: Rejection::BadBuffer { .. }, .. })));
    // Invalid tasks are refused at upload.
    assert!(matches!(rt.upload_tasks(&[Task::noop(0), Task::raw(77, [0; 12])]), Err(Error::InvalidTask { index: 1, .. })));
}

/// List runs (docs/protocol.md, step 4l) under churn: lists of three sizes, each cut
/// into many runs (`list_chunk`), submitted round after round without waiting and
/// interleaved with host-fed batches, so that the 32-entry run table is reused many
/// times while workers scan it and warps move between lists and the ring. Every task
/// is a `mark` on its own counter: each runs exactly once per round.
pub fn list_runs_interleaved(rt: &Runtime, rounds: usize) {
    let sizes = [700usize, 1500, 3000];
    let host = 900usize;
    let total: usize = sizes.iter().sum::<usize>() + host;
    let c = rt.buffer_from(&vec![0u32; total]).unwrap();
    let mut at = 0u32;
    let mut lists = vec![];
    for n in sizes {
        lists.push(rt.upload_tasks(&(0..n).map(|i| Task::mark(c.all(), at + i as u32)).collect::<Vec<_>>()).unwrap());
        at += n as u32;
    }
    let fed: Vec<Task> = (0..host).map(|i| Task::mark(c.all(), at + i as u32)).collect();
    let mut tickets = vec![];
    for _ in 0..rounds {
        for l in &lists {
            tickets.push(l.submit().unwrap());
            tickets.push(rt.submit(&fed[..host / 3]).unwrap());
        }
    }
    for t in tickets {
        t.wait().unwrap();
    }
    let got = c.read().unwrap();
    for (i, &v) in got.iter().enumerate() {
        // The host-fed third runs once per list per round, the rest of it never.
        let want = if i < at as usize {
            rounds as u32
        } else if i < at as usize + host / 3 {
            3 * rounds as u32
        } else {
            0
        };
        assert_eq!(v, want, "counter {i}");
    }
}

/// Resident lists submitted in chunks (a queue slot standing for several tasks,
/// docs/protocol.md 4c): lists of many lengths, replayed round after round
/// beside host batches, run every task exactly once, and their tickets count tasks.
/// A chunk's tasks signal their own counters (a task submitted after waits for them
/// all), push children that run once each, and a failure inside a chunk is named by
/// its task's index in the list. `big` should exceed the runtime's workers, so that
/// its list is chunked with the automatic size too.
pub fn list_chunks_exactly_once(rt: &Runtime, big: usize, rounds: usize) {
    let sizes = [1usize, 2, 31, 33, 100, 1000, 4099, big];
    let total: usize = sizes.iter().sum();
    let base: u32 = rand::rng().random_range(1..1 << 30);
    let c = rt.buffer_from(&vec![base; total]).unwrap();
    let done = rt.counter().unwrap();
    let mut at = 0u32;
    let mut lists = vec![];
    for n in sizes {
        let tasks: Vec<Task> = (0..n).map(|i| Task::mark(c.all(), at + i as u32).signals(done.id())).collect();
        let list = rt.upload_tasks(&tasks).unwrap();
        assert_eq!(list.len(), n);
        lists.push(list);
        at += n as u32;
    }
    let mut tickets = vec![];
    for _ in 0..rounds {
        for l in &lists {
            let t = l.submit().unwrap();
            assert_eq!(t.len(), l.len());
            tickets.push(t);
            tickets.push(rt.submit(&[Task::noop(0); 7]).unwrap());
        }
    }
    // Submitted after every list: waits for all their signals.
    let after = rt.submit(&[Task::noop(0).after(done.id(), (total * rounds) as u32)]).unwrap();
    for t in tickets {
        t.wait().unwrap();
    }
    after.wait_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(done.value().unwrap(), (total * rounds) as u32);
    let got = c.read().unwrap();
    let bad: Vec<_> = got.iter().enumerate().filter(|(_, v)| **v != base + rounds as u32).take(5).collect();
    assert!(bad.is_empty(), "tasks not run exactly {rounds} times (index, value; poison {base}): {bad:?}");

    // Children of chunked tasks: a list of trees.
    let (trees, depth, fanout) = (big, 2, 3);
    let nodes = Task::tree_nodes(depth, fanout).unwrap() as usize;
    let marks = rt.buffer_from(&vec![base; trees * nodes]).unwrap();
    let roots: Vec<Task> = (0..trees).map(|t| Task::tree(marks.slice(t * nodes..(t + 1) * nodes), 0, depth, fanout)).collect();
    let forest = rt.upload_tasks(&roots).unwrap();
    forest.submit().unwrap().wait().unwrap();
    let got = marks.read().unwrap();
    let bad: Vec<_> = got.iter().enumerate().filter(|(_, v)| **v != base + 1).take(5).collect();
    assert!(bad.is_empty(), "tree nodes not marked exactly once (index, value; poison {base}): {bad:?}");

    // A failure inside a chunk names its task. The spinning task polls for
    // cancellation; the marks around it run once each whatever happens.
    let spin_at = big / 2 + 1;
    let m = rt.buffer_from(&vec![0u32; big]).unwrap();
    let tasks: Vec<Task> =
        (0..big).map(|i| if i == spin_at { Task::spin(20_000_000_000) } else { Task::mark(m.all(), i as u32) }).collect();
    let list = rt.upload_tasks(&tasks).unwrap();
    let t = list.submit().unwrap();
    t.cancel().unwrap();
    match t.wait_timeout(Duration::from_secs(30)) {
        Err(Error::TaskFailed { index, status: Status::Cancelled, .. }) => assert_eq!(index, spin_at as u64),
        other => panic!("expected the spinning task {spin_at} cancelled, got {other:?}"),
    }
    let got = m.read().unwrap();
    for (i, &v) in got.iter().enumerate() {
        assert_eq!(v, u32::from(i != spin_at), "mark {i}");
    }
}

/// The device's own check: forged tasks sent past the host check complete with a typed
/// failure status and touch nothing; the valid tasks beside them run.
pub fn device_rejects_forged_tasks(rt: &Runtime) {
    use resident::Slice;
    let x = rt.buffer_from(&[1.0f32; 64]).unwrap();
    let y = rt.buffer_from(&[2.0f32; 64]).unwrap();
    let c = rt.buffer_from(&[0u32; 8]).unwrap();
    let gone = rt.buffer_from(&[0.0f32; 8]).unwrap();
    let stale = gone.all();
    drop(gone);
    let forged = [
        (Task::raw(0xdead, [0; 12]), Status::InvalidOpcode),
        (Task::axpy(1.0, x.all().with_offset(60), y.all()), Status::OutOfRange),
        (Task::axpy(1.0, x.slice(0..8), y.all().with_offset(u32::MAX).with_len(8)), Status::OutOfRange),
        (Task::axpy(1.0, Slice::new(c.all().handle, 0, 8), y.slice(0..8)), Status::BadBuffer),
        (Task::axpy(1.0, stale, stale), Status::BadBuffer),
        (Task::axpy(1.0, x.slice(0..8), y.slice(0..4)), Status::BadArgs),
        (Task::mark(c.all(), 8), Status::OutOfRange),
        (Task::mark(Slice::new(resident::BufferHandle(0xffff_ffff), 0, 1), 0), Status::BadBuffer),
        // An index past the table in the second slice: the device reads both entries
        // before it checks either (the index clamped for the read), then refuses.
        (Task::axpy(1.0, x.slice(0..8), Slice::new(resident::BufferHandle(0xffff_ffff), 0, 8)), Status::BadBuffer),
        // The first index past the table, with a live buffer's generation.
        (
            Task::axpy(1.0, Slice::new(resident::BufferHandle(0x1000 | (x.all().handle.0 & 0xffff_0000)), 0, 8), y.slice(0..8)),
            Status::BadBuffer,
        ),
    ];
    for (i, (task, want)) in forged.iter().enumerate() {
        let batch = [Task::mark(c.all(), 0), *task, Task::mark(c.all(), 1)];
        // SAFETY: the point of the test; the device must refuse the middle task.
        let t = unsafe { rt.batch(&batch).submit_unchecked() }.unwrap();
        match t.wait() {
            Err(Error::TaskFailed { index, seq, status }) => {
                assert_eq!(status, *want, "case {i}");
                assert_eq!(seq, t.first_seq() + 1, "case {i}: the failed task is the forged one");
                assert_eq!(index, 1, "case {i}: its index in the batch");
            }
            other => panic!("case {i}: expected TaskFailed({want:?}), got {other:?}"),
        }
    }
    let n = forged.len() as u32;
    assert_eq!(c.read().unwrap(), [n, n, 0, 0, 0, 0, 0, 0], "the valid tasks beside each forged one ran, once");
    assert_eq!(x.read().unwrap(), vec![1.0; 64], "no forged task wrote x");
    assert_eq!(y.read().unwrap(), vec![2.0; 64], "no forged task wrote y");
    // The sentinel cannot be forged.
    assert!(matches!(unsafe { rt.batch(&[Task::terminate()]).submit_unchecked() }, Err(Error::InvalidTask { .. })));
}

/// Device-side dependencies, three rounds on one counter: in each round's single batch,
/// stage 1 (`y += a x` over `tasks` slices) signals the counter; stage 2 (`z += y` on
/// the same slices) waits until the counter has counted every stage-1 task of this
/// round. Without the wait, stage-2 tasks would run beside stage 1 (thousands of
/// workers) and read old `y`. Checked against the f64 reference after each round.
pub fn dependencies_order_stages(rt: &Runtime, tasks: usize, slice: usize) {
    let mut rng = rand::rng();
    let n = tasks * slice;
    let xs: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut y_ref: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut z_ref: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let x = rt.buffer_from(&xs).unwrap();
    let y = rt.buffer_from(&y_ref.iter().map(|&v| v as f32).collect::<Vec<_>>()).unwrap();
    let z = rt.buffer_from(&z_ref.iter().map(|&v| v as f32).collect::<Vec<_>>()).unwrap();
    let stage1 = rt.counter().unwrap();
    for round in 1..=3u32 {
        let a: f32 = rng.random_range(0.5..2.0);
        let s = |i: usize| i * slice..(i + 1) * slice;
        let mut batch: Vec<Task> = (0..tasks).map(|i| Task::axpy(a, x.slice(s(i)), y.slice(s(i))).signals(stage1.id())).collect();
        batch.extend((0..tasks).map(|i| Task::axpy(1.0, y.slice(s(i)), z.slice(s(i))).after(stage1.id(), round * tasks as u32)));
        rt.submit(&batch).unwrap().wait().unwrap();
        for i in 0..n {
            y_ref[i] += a as f64 * xs[i] as f64;
            z_ref[i] += y_ref[i];
        }
        assert_eq!(stage1.value().unwrap(), round * tasks as u32);
        let got = z.read().unwrap();
        let worst = got.iter().zip(&z_ref).map(|(&g, &r)| (g as f64 - r).abs() / r.abs().max(1.0)).fold(0.0, f64::max);
        assert!(worst < 1e-5, "round {round}: stage 2 read stale stage-1 output (max relative error {worst:e})");
    }
    // A counter that does not exist, or no longer does, is refused at submit time.
    let gone = rt.counter().unwrap().id();
    for t in [Task::noop(0).after(resident::CounterId::new(4000, 1), 1), Task::noop(0).signals(gone)] {
        assert!(matches!(rt.submit(&[t]), Err(Error::InvalidTask { reason: Rejection::BadCounter(_), .. })), "{t:?}");
    }
}

/// Follow-up tasks pushed on the device: `trees` trees of `depth` levels below the root
/// and `fanout` children per node, grown by the tasks themselves, submitted from
/// several host threads in batches of roots. Marks start at a random poison value;
/// once the tickets are done (no other synchronization) every node has been marked
/// exactly once: a ticket waits for the children too.
pub fn tree_children_exactly_once(rt: &Runtime, trees: usize, depth: u32, fanout: u32, threads: usize) {
    let nodes = Task::tree_nodes(depth, fanout).unwrap() as usize;
    let base: u32 = rand::rng().random_range(1..1 << 30);
    let marks = rt.buffer_from(&vec![base; trees * nodes]).unwrap();
    let before = rt.metrics().completed;
    let start = Instant::now();
    std::thread::scope(|s| {
        for th in 0..threads {
            let (rt, marks) = (&rt, &marks);
            s.spawn(move || {
                let mine: Vec<usize> = (th..trees).step_by(threads).collect();
                for chunk in mine.chunks(4) {
                    let roots: Vec<Task> =
                        chunk.iter().map(|&t| Task::tree(marks.slice(t * nodes..(t + 1) * nodes), 0, depth, fanout)).collect();
                    rt.submit(&roots).unwrap().wait().unwrap();
                }
            });
        }
    });
    // Read after the waits, with no other synchronization: the children's writes must
    // be visible once their roots' tickets are done.
    let got = marks.read().unwrap();
    for t in 0..trees {
        let tree = &got[t * nodes..(t + 1) * nodes];
        let bad: Vec<_> = tree.iter().enumerate().filter(|(_, v)| **v != base + 1).take(5).collect();
        assert!(bad.is_empty(), "tree {t}: nodes not marked exactly once (index, value; poison {base}): {bad:?}");
    }
    // Children are not counted as tasks of the queue: only the roots are.
    assert_eq!(rt.metrics().completed - before, trees as u64);
    eprintln!("{trees} trees of {nodes} nodes ({} tasks) in {:?}", trees * nodes, start.elapsed());
}

/// Irregular trees (each node's children a hash of its number, 0 to `max`): `trees`
/// of them, `depth` levels below each root, submitted together. Exactly the nodes of
/// the CPU's reference walk are marked, each once; every other number keeps its poison.
pub fn irregular_trees_exactly_once(rt: &Runtime, trees: usize, depth: u32, max: u32) {
    let span = Task::tree_nodes(depth, max).unwrap() as usize;
    let base: u32 = rand::rng().random_range(1..1 << 30);
    let marks = rt.buffer_from(&vec![base; trees * span]).unwrap();
    let roots: Vec<Task> = (0..trees).map(|t| Task::irregular_tree(marks.slice(t * span..(t + 1) * span), 0, depth, max)).collect();
    rt.submit(&roots).unwrap().wait().unwrap();
    let mut want = vec![base; span];
    let mut nodes = 0;
    resident::builtin::visit_irregular_tree(0, depth, max, &mut |n, _| {
        want[n as usize] += 1;
        nodes += 1;
    });
    let got = marks.read().unwrap();
    for t in 0..trees {
        let tree = &got[t * span..(t + 1) * span];
        let bad: Vec<_> = tree.iter().zip(&want).enumerate().filter(|(_, (g, w))| g != w).take(5).collect();
        assert!(bad.is_empty(), "irregular tree {t} of {nodes} nodes: (number, (got, want)), poison {base}: {bad:?}");
    }
}

/// A task that pushes more children than the spawn ring holds fails with `QueueFull`
/// (typed, through its ticket); the children it did push still run; the runtime goes
/// on. Needs a runtime with one worker and `spawn_capacity` 2, so that nobody pops
/// while the root pushes.
pub fn spawn_ring_full_is_reported(rt: &Runtime) {
    let marks = rt.buffer_from(&[0u32; 17]).unwrap();
    let r = rt.submit(&[Task::tree(marks.all(), 0, 1, 16)]).unwrap().wait();
    assert!(matches!(r, Err(Error::TaskFailed { status: Status::QueueFull, .. })), "{r:?}");
    let got = marks.read().unwrap();
    assert_eq!(got[0], 1);
    assert_eq!(got[1..].iter().sum::<u32>(), 2, "the two children that fit ran once each: {got:?}");
    rt.submit(&[Task::noop(1)]).unwrap().wait().unwrap();
}

/// Shutdown drains children too: trees submitted and not waited for are complete once
/// `close` returns.
pub fn shutdown_drains_children(rt: Runtime, trees: usize, depth: u32, fanout: u32) {
    let nodes = Task::tree_nodes(depth, fanout).unwrap() as usize;
    let marks = rt.buffer_from(&vec![0u32; trees * nodes]).unwrap();
    let tickets: Vec<_> =
        (0..trees).map(|t| rt.submit(&[Task::tree(marks.slice(t * nodes..(t + 1) * nodes), 0, depth, fanout)]).unwrap()).collect();
    rt.close().unwrap();
    for t in &tickets {
        assert_eq!(t.try_wait(), Some(Ok(())));
    }
    assert!(marks.read().unwrap().iter().all(|&v| v == 1));
}

/// With a small spawn ring, some pushes fail: each failed task reports QueueFull (or
/// ChildFailed for a child of the tree), and every node is marked at most once: no
/// child is run twice, and the ones that ran are exactly the ones pushed. The runtime
/// keeps working afterwards.
pub fn spawn_ring_small_never_loses_a_child(rt: &Runtime, trees: usize, depth: u32, fanout: u32) {
    let nodes = Task::tree_nodes(depth, fanout).unwrap() as usize;
    let marks = rt.buffer_from(&vec![0u32; trees * nodes]).unwrap();
    let roots: Vec<Task> = (0..trees).map(|t| Task::tree(marks.slice(t * nodes..(t + 1) * nodes), 0, depth, fanout)).collect();
    let r = rt.submit(&roots).unwrap().wait();
    let got = marks.read().unwrap();
    assert!(got.iter().all(|&v| v <= 1), "a node ran twice");
    // A node ran iff its parent ran and pushed it; a tree is whole iff no push failed.
    for t in 0..trees {
        let tree = &got[t * nodes..(t + 1) * nodes];
        assert_eq!(tree[0], 1, "root {t} ran");
        for (i, &v) in tree.iter().enumerate().skip(1) {
            let parent = (i - 1) / fanout as usize;
            assert!(v == 0 || tree[parent] == 1, "tree {t}: node {i} ran without its parent");
        }
    }
    let ran = got.iter().filter(|&&v| v == 1).count();
    match r {
        Ok(()) => assert_eq!(ran, trees * nodes),
        Err(Error::TaskFailed { status: Status::QueueFull | Status::ChildFailed, .. }) => assert!(ran < trees * nodes),
        Err(e) => panic!("unexpected {e:?}"),
    }
    eprintln!("small spawn ring: {ran} of {} nodes ran, outcome {r:?}", trees * nodes);
    rt.submit(&[Task::noop(1)]).unwrap().wait().unwrap();
}

/// Tickets as futures: many batches awaited together on one executor thread, each with
/// its own results.
pub fn async_tickets(rt: &Runtime, batches: usize, per_batch: usize) {
    use futures::executor::block_on;
    let tickets: Vec<_> = (0..batches)
        .map(|b| rt.batch(&(0..per_batch).map(|i| Task::noop((b * per_batch + i) as u64)).collect::<Vec<_>>()).results().submit().unwrap())
        .collect();
    let outcomes = block_on(futures::future::join_all(tickets.iter().map(|t| t.wait_async())));
    assert!(outcomes.iter().all(|r| r.is_ok()), "{outcomes:?}");
    for (b, t) in tickets.iter().enumerate() {
        let want: Vec<u64> = (0..per_batch).map(|i| (b * per_batch + i) as u64).collect();
        assert_eq!(t.results().unwrap(), want);
    }
    // The owned form: `ticket.await`.
    let owned = rt.submit(&[Task::noop(7)]).unwrap();
    assert_eq!(block_on(async { owned.await }), Ok(()));
}

/// A future waiting on a task that cannot finish is resolved by shutdown, not left
/// pending.
pub fn async_ticket_resolved_by_shutdown(rt: Runtime) {
    let t = rt.submit(&[Task::spin(60_000_000_000)]).unwrap();
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            let _ = rt.close();
        });
        let r = futures::executor::block_on(t.wait_async());
        assert!(r.is_err(), "{r:?}");
    });
    assert!(start.elapsed() < Duration::from_secs(10));
}

/// Batches of every size from several threads, so that publications alternate between
/// the relay (small batches) and copies (large ones, resident lists): every task runs
/// exactly once, nothing is published twice or skipped at a hand-over.
pub fn mixed_batch_sizes_exactly_once(rt: &Runtime, threads: usize, per_thread: usize) {
    let n = threads * per_thread;
    let marks = rt.buffer_from(&vec![0u32; n]).unwrap();
    std::thread::scope(|s| {
        for th in 0..threads {
            let (rt, marks) = (&rt, &marks);
            s.spawn(move || {
                let mut rng = rand::rng();
                let mut i = th * per_thread;
                let end = (th + 1) * per_thread;
                let mut tickets = vec![];
                while i < end {
                    let len = match rng.random_range(0..10) {
                        0 => rng.random_range(1000..5000),
                        1..=5 => rng.random_range(1..8),
                        _ => rng.random_range(8..100),
                    }
                    .min(end - i);
                    let tasks: Vec<Task> = (i..i + len).map(|k| Task::mark(marks.all(), k as u32)).collect();
                    if rng.random_range(0..8) == 0 {
                        let list = rt.upload_tasks(&tasks).unwrap();
                        tickets.push(list.submit().unwrap());
                    } else {
                        tickets.push(rt.submit(&tasks).unwrap());
                    }
                    if tickets.len() > 16 {
                        tickets.remove(0).wait().unwrap();
                    }
                    i += len;
                }
                tickets.into_iter().for_each(|t| t.wait().unwrap());
            });
        }
    });
    let got = marks.read().unwrap();
    let bad: Vec<_> = got.iter().enumerate().filter(|(_, v)| **v != 1).take(10).collect();
    assert!(bad.is_empty(), "tasks not run exactly once (index, count): {bad:?}");
}

/// Large batches through `Batch::submit_unchecked` (no host check; staged on the helpers,
/// piece by piece) from `threads` threads at once, larger than the ring too: every task
/// runs exactly once, and a forged task in the middle of one (a stale handle) is
/// refused by the device alone, its neighbours run. Fresh random sizes each run.
pub fn large_unchecked_batches_exactly_once(rt: &Runtime, threads: usize, batches: usize) {
    let mut rng = rand::rng();
    let sizes: Vec<usize> = (0..threads * batches).map(|_| rng.random_range(4096..20_000)).collect();
    let n: usize = sizes.iter().sum();
    let marks = rt.buffer_from(&vec![0u32; n]).unwrap();
    // A stale handle: its buffer is dropped at once.
    let stale = rt.buffer::<u32>(8).unwrap().all();
    std::thread::scope(|s| {
        for th in 0..threads {
            let (marks, sizes) = (&marks, &sizes);
            s.spawn(move || {
                let mut at: usize = sizes[..th * batches].iter().sum();
                for (b, &len) in sizes[th * batches..(th + 1) * batches].iter().enumerate() {
                    let mut tasks: Vec<Task> = (at..at + len).map(|k| Task::mark(marks.all(), k as u32)).collect();
                    // The first batch of each thread carries a forged task (its mark
                    // stays 0: set by hand below).
                    let forged = (b == 0).then_some(len / 2);
                    if let Some(f) = forged {
                        tasks[f] = Task::mark(stale, 0);
                    }
                    // SAFETY: marks of live buffers, and one forged handle the device must
                    // refuse; no terminate sentinel.
                    let t = unsafe { rt.batch(&tasks).submit_unchecked() }.unwrap();
                    match (t.wait(), forged) {
                        (Ok(()), None) => {}
                        (Err(Error::TaskFailed { seq, status: Status::BadBuffer, .. }), Some(f)) => {
                            assert_eq!(seq, t.first_seq() + f as u64, "the refused task is the forged one")
                        }
                        (other, _) => panic!("batch {b} of thread {th}: {other:?}"),
                    }
                    at += len;
                }
            });
        }
    });
    // The forged tasks' marks were never submitted.
    let mut want = vec![1u32; n];
    let mut at = 0;
    for (i, len) in sizes.iter().enumerate() {
        if i % batches == 0 {
            want[at + len / 2] = 0;
        }
        at += len;
    }
    let got = marks.read().unwrap();
    let bad: Vec<_> = got.iter().zip(&want).enumerate().filter(|(_, (g, w))| g != w).take(10).collect();
    assert!(bad.is_empty(), "tasks not run exactly once (index, (got, want)): {bad:?}");
}

/// Large batches whose runs are compact (32-byte records: tree nodes of depth 1, whose
/// six argument words are all in use, and each pushes one child from the widened
/// task's header) or full (a run holding an axpy, whose arguments need 28 bytes),
/// mixed within one batch and between the `threads` producers: every task runs exactly
/// once, with its own arguments. Fresh random sizes and places each run.
pub fn compact_and_full_runs_exactly_once(rt: &Runtime, threads: usize, batches: usize) {
    let mut rng = rand::rng();
    let sizes: Vec<usize> = (0..threads * batches).map(|_| rng.random_range(4096..20_000)).collect();
    let n: usize = sizes.iter().sum();
    // Task `k` is an axpy (full) or a tree node (compact): some batches hold none.
    let full: Vec<bool> = (0..threads * batches)
        .flat_map(|b| {
            let p = [0.0, 0.0005, 0.01][b % 3];
            (0..sizes[b]).map(|_| rng.random_bool(p)).collect::<Vec<_>>()
        })
        .collect();
    let marks = rt.buffer_from(&vec![0u32; 2 * n]).unwrap();
    let ones = rt.buffer_from(&vec![1.0f32; n]).unwrap();
    let ys = rt.buffer_from(&vec![0.0f32; n]).unwrap();
    std::thread::scope(|s| {
        for th in 0..threads {
            let (marks, ones, ys, sizes, full) = (&marks, &ones, &ys, &sizes, &full);
            s.spawn(move || {
                let mut at: usize = sizes[..th * batches].iter().sum();
                let mut tickets = vec![];
                for &len in &sizes[th * batches..(th + 1) * batches] {
                    let tasks: Vec<Task> = (at..at + len)
                        .map(|k| {
                            if full[k] {
                                Task::axpy(1.0, ones.slice(k..k + 1), ys.slice(k..k + 1))
                            } else {
                                // Marks `2k`, and its child (fanout 1) `2k + 1`.
                                Task::tree(marks.all(), 2 * k as u32, 1, 1)
                            }
                        })
                        .collect();
                    tickets.push(rt.submit(&tasks).unwrap());
                    if tickets.len() > 2 {
                        tickets.remove(0).wait().unwrap();
                    }
                    at += len;
                }
                tickets.into_iter().for_each(|t| t.wait().unwrap());
            });
        }
    });
    let (got, y) = (marks.read().unwrap(), ys.read().unwrap());
    let bad: Vec<_> = (0..n)
        .filter(|&k| {
            let m = (got[2 * k], got[2 * k + 1]);
            if full[k] { m != (0, 0) || y[k] != 1.0 } else { m != (1, 1) || y[k] != 0.0 }
        })
        .take(10)
        .map(|k| (k, full[k], got[2 * k], got[2 * k + 1], y[k]))
        .collect();
    assert!(bad.is_empty(), "tasks not run exactly once (index, full, marks, y): {bad:?}");
}

/// Compact runs in a small ring whose next lap is written while they still run: every
/// slot is reused as soon as the room rule allows, by the next lap's runs and by
/// single tasks (staged into the same host ring for the relay), while the run's later
/// tasks are still to be read (short spins hold the workers; segments of 32 let
/// `completed` move inside a run). Needs a runtime with a small ring (1024), segments
/// of 32 and few workers. A record overwritten before its task read it would run
/// another task or none: every mark must be set exactly once, every ticket succeed
/// within 20 s. (Records packed from the run's first slot, the first version: one run
/// in three hung, tickets never resolved, on an H100.)
pub fn compact_runs_beside_next_lap_writers(rt: &Runtime, threads: usize, rounds: usize) {
    let per = rounds * 3100;
    // A lost task (its record overwritten) leaves its ticket unresolved: a failure
    // here, not a hang.
    let settle = |t: resident::Ticket| match t.wait_timeout(Duration::from_secs(20)) {
        Ok(()) => {}
        Err(e) => panic!("a ticket of tasks {}..: {e:?}", t.first_seq()),
    };
    let marks = rt.buffer_from(&vec![0u32; threads * per]).unwrap();
    let used: Vec<usize> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|th| {
                let marks = &marks;
                s.spawn(move || {
                    let mut rng = rand::rng();
                    let mut next = th * per;
                    let mut tickets = std::collections::VecDeque::new();
                    for _ in 0..rounds {
                        let len = rng.random_range(300..3000);
                        let tasks: Vec<Task> = (0..len)
                            .map(|k| {
                                if k % 8 == 0 {
                                    Task::spin(2_000)
                                } else {
                                    next += 1;
                                    Task::mark(marks.all(), (next - 1) as u32)
                                }
                            })
                            .collect();
                        let submit = |t: &[Task]| rt.submit(t).unwrap_or_else(|e| panic!("a submit: {e:?}"));
                        tickets.push_back(submit(&tasks));
                        for _ in 0..rng.random_range(1..5) {
                            next += 1;
                            tickets.push_back(submit(&[Task::mark(marks.all(), (next - 1) as u32)]));
                        }
                        while tickets.len() > 6 {
                            settle(tickets.pop_front().unwrap());
                        }
                    }
                    tickets.into_iter().for_each(settle);
                    next - th * per
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let got = marks.read().unwrap();
    let bad: Vec<_> = (0..threads * per).filter(|&i| got[i] != u32::from(i % per < used[i / per])).take(10).map(|i| (i, got[i])).collect();
    assert!(bad.is_empty(), "marks not set exactly once (index, count): {bad:?}");
}

/// Buffers and task lists may outlive the runtime handle (they keep its memory alive):
/// the last of them to drop frees the queue too. On the GPU this once freed a buffer on
/// the runtime's transfer stream after that stream was destroyed (a segfault in
/// `cuMemFreeAsync`, H200, 2026-11-23). Twice, so that a second runtime starts after.
pub fn buffers_outlive_runtime(make: impl Fn() -> Runtime) {
    for round in 0..2 {
        let rt = make();
        let x = rt.buffer_from(&[1.0f32; 4096]).unwrap();
        let y = rt.buffer::<f32>(4096).unwrap();
        let list = rt.upload_tasks(&[Task::axpy(2.0, x.all(), y.all())]).unwrap();
        list.submit().unwrap().wait().unwrap();
        rt.shutdown().unwrap();
        assert!(y.read().unwrap().iter().all(|&v| v == 2.0), "round {round}");
        drop(list);
        drop(x);
        drop(y); // the runtime's last owner
    }
}

/// Lone tasks, the express path (`task_flags::EXPRESS`: the ticket resolves from the
/// task's own record; on the GPU the relay warp runs short ones itself, longer ones go
/// to a worker): from several threads, some waited at once, some kept in flight beside
/// batches. Every task runs exactly once; results, failures and outputs come back
/// through the record, checked against a reference in f64; a dependency still orders a
/// lone task after another (the relay leaves such a task to a worker).
pub fn express_tasks(rt: &Runtime, threads: usize, per_thread: usize) {
    let n = threads * per_thread;
    let marks = rt.buffer_from(&vec![0u32; n]).unwrap();
    // Per thread, one axpy slice of 2048 floats: lengths up to 1024 are the relay's
    // to run, 1025 and more a worker's.
    const SLICE: usize = 2048;
    let mut rng = rand::rng();
    let xs: Vec<f32> = (0..threads * SLICE).map(|_| rng.random_range(-1.0..1.0)).collect();
    let x = rt.buffer_from(&xs).unwrap();
    let y = rt.buffer_from(&vec![f32::NAN; threads * SLICE]).unwrap();
    std::thread::scope(|s| {
        for th in 0..threads {
            let (rt, marks, x, y, xs) = (&rt, &marks, &x, &y, &xs);
            s.spawn(move || {
                let mut rng = rand::rng();
                let mut in_flight = vec![];
                let (lo, hi) = (th * per_thread, (th + 1) * per_thread);
                let mut i = lo;
                while i < hi {
                    match rng.random_range(0..6) {
                        // A lone mark, waited at once: its inline result is the old count.
                        0 | 1 => {
                            let t = rt.batch(&[Task::mark(marks.all(), i as u32)]).results().submit().unwrap();
                            assert_eq!(t.results().unwrap(), vec![0], "mark {i}");
                            i += 1;
                        }
                        // A lone mark left in flight.
                        2 => {
                            in_flight.push(rt.submit(&[Task::mark(marks.all(), i as u32)]).unwrap());
                            i += 1;
                        }
                        // A small batch (not express) between them.
                        3 => {
                            let end = (i + 3).min(hi);
                            let batch: Vec<Task> = (i..end).map(|k| Task::mark(marks.all(), k as u32)).collect();
                            in_flight.push(rt.submit(&batch).unwrap());
                            i = end;
                        }
                        // A lone axpy on poisoned output: y = a * x (y starts at 0).
                        4 => {
                            let len = if rng.random_bool(0.5) { rng.random_range(1..=1024) } else { rng.random_range(1025..=SLICE) };
                            let a: f32 = rng.random_range(-2.0..2.0);
                            let r = th * SLICE..th * SLICE + len;
                            y.write_at(th * SLICE, &vec![0.0f32; len]).unwrap();
                            let t = rt.batch(&[Task::axpy(a, x.slice(r.clone()), y.slice(r.clone()))]).results().submit().unwrap();
                            assert_eq!(t.results().unwrap(), vec![len as u64]);
                            let got = y.read().unwrap();
                            for k in r {
                                let want = a as f64 * xs[k] as f64;
                                assert!((got[k] as f64 - want).abs() <= 1e-6 * want.abs().max(1.0), "axpy[{k}]: {} vs {want}", got[k]);
                            }
                        }
                        // A lone task that fails on the device (the host's check, which
                        // would refuse it, skipped): the record carries the failure.
                        _ => {
                            // SAFETY: a valid buffer; the device refuses the index.
                            let t = unsafe { rt.batch(&[Task::mark(marks.slice(0..1), 5)]).submit_unchecked() }.unwrap();
                            match t.wait() {
                                Err(Error::TaskFailed { seq, status, .. }) => {
                                    assert_eq!((seq, status), (t.first_seq(), Status::OutOfRange))
                                }
                                other => panic!("a mark past its slice: {other:?}"),
                            }
                        }
                    }
                    if in_flight.len() > 8 {
                        in_flight.remove(0).wait().unwrap();
                    }
                }
                in_flight.into_iter().for_each(|t| t.wait().unwrap());
            });
        }
    });
    let got = marks.read().unwrap();
    let bad: Vec<_> = got.iter().enumerate().filter(|(_, v)| **v != 1).take(10).collect();
    assert!(bad.is_empty(), "tasks not run exactly once (index, count): {bad:?}");
    // A lone task that waits on a counter is released by a later lone task.
    let c = rt.counter().unwrap();
    let flags = rt.buffer_from(&[0u32; 2]).unwrap();
    let waiter = rt.submit(&[Task::mark(flags.all(), 0).after(c.id(), 1)]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2));
    assert!(waiter.try_wait().is_none(), "ran before its dependency");
    rt.submit(&[Task::mark(flags.all(), 1).signals(c.id())]).unwrap().wait().unwrap();
    waiter.wait().unwrap();
    assert_eq!(flags.read().unwrap(), vec![1, 1]);
}

/// A large batch (validated and staged on several host threads, published in many
/// pieces) runs every task exactly once; one bad task far into it refuses the whole
/// batch with its index (the lowest bad one), runs nothing, and the runtime goes on.
/// Over several laps of the ring. `spends`: the refused batch's sequence numbers are
/// spent by no-ops (checked as it is staged, after its reservation), else it consumes
/// none (checked before it).
pub fn large_batches_exactly_once_or_refused(rt: &Runtime, n: usize, rounds: usize, spends: bool) {
    let marks = rt.buffer_from(&vec![0u32; n]).unwrap();
    let good: Vec<Task> = (0..n).map(|k| Task::mark(marks.all(), k as u32)).collect();
    let mut rng = rand::rng();
    for round in 0..rounds {
        // A refused batch: bad tasks at two random places; the lower one is named.
        let mut bad = good.clone();
        let (a, b) = (rng.random_range(n / 2..n), rng.random_range(n / 2..n));
        for &i in &[a, b] {
            bad[i] = Task::mark(marks.slice(0..1), 5);
        }
        let next = rt.submit(&[Task::noop(0)]).unwrap();
        next.wait().unwrap();
        match rt.submit(&bad) {
            Err(Error::InvalidTask { index, reason: Rejection::IndexOutOfRange { .. } }) => assert_eq!(index, a.min(b), "round {round}"),
            other => panic!("round {round}: expected InvalidTask at {}, got {other:?}", a.min(b)),
        }
        let after = rt.submit(&[Task::noop(0)]).unwrap();
        let spent = if spends { n as u64 } else { 0 };
        assert_eq!(after.first_seq(), next.first_seq() + 1 + spent, "round {round}: sequence numbers of the refused batch");
        after.wait().unwrap();
        assert_eq!(marks.read().unwrap(), vec![round as u32; n], "round {round}: a task of a refused batch ran");
        rt.submit(&good).unwrap().wait().unwrap();
        let got = marks.read().unwrap();
        let wrong: Vec<_> = got.iter().enumerate().filter(|(_, v)| **v != round as u32 + 1).take(10).collect();
        assert!(wrong.is_empty(), "round {round}: tasks not run exactly once (index, count): {wrong:?}");
    }
}

/// Mid-size batches (512-4095 tasks: checked and staged in halves where the runtime
/// has partner threads) from `threads` threads at once, `rounds` each, fresh random
/// sizes; three in four refused, with one or two bad tasks anywhere (either half, or
/// both): a refused batch names its lowest bad index and runs nothing, a good one runs
/// every task exactly once. In a third of the batches every seventh task is an axpy
/// (a full record among compact ones), so that the halves' runs differ in form.
pub fn halved_batches_exactly_once_or_refused(rt: &Runtime, threads: usize, rounds: usize) {
    let mut rng = rand::rng();
    let sizes: Vec<usize> = (0..threads * rounds).map(|_| rng.random_range(512..4096)).collect();
    let bads: Vec<Vec<usize>> = sizes
        .iter()
        .map(|&n| match rng.random_range(0..4) {
            0 => vec![rng.random_range(0..n / 2)],
            1 => vec![rng.random_range(n / 2..n)],
            2 => vec![rng.random_range(0..n / 2), rng.random_range(n / 2..n)],
            _ => vec![],
        })
        .collect();
    let total: usize = sizes.iter().sum();
    let marks = rt.buffer_from(&vec![0u32; total]).unwrap();
    let ones = rt.buffer_from(&vec![1.0f32; total]).unwrap();
    let ys = rt.buffer_from(&vec![0.0f32; total]).unwrap();
    let starts: Vec<usize> = sizes.iter().scan(0, |at, &n| Some(std::mem::replace(at, *at + n))).collect();
    let axpy = |b: usize, k: usize| b.is_multiple_of(3) && k.is_multiple_of(7);
    std::thread::scope(|s| {
        for th in 0..threads {
            let (marks, ones, ys, sizes, bads, starts) = (&marks, &ones, &ys, &sizes, &bads, &starts);
            s.spawn(move || {
                let mut tickets = vec![];
                for b in th * rounds..(th + 1) * rounds {
                    let (at, n) = (starts[b], sizes[b]);
                    let mut tasks: Vec<Task> = (at..at + n)
                        .map(|k| {
                            if axpy(b, k) {
                                Task::axpy(1.0, ones.slice(k..k + 1), ys.slice(k..k + 1))
                            } else {
                                Task::mark(marks.all(), k as u32)
                            }
                        })
                        .collect();
                    for &i in &bads[b] {
                        tasks[i] = Task::mark(marks.slice(0..1), 5);
                    }
                    match (rt.submit(&tasks), bads[b].iter().min()) {
                        (Ok(t), None) => tickets.push(t),
                        (Err(Error::InvalidTask { index, reason: Rejection::IndexOutOfRange { .. } }), Some(&lo)) => {
                            assert_eq!(index, lo, "batch {b} of {n}: the lowest bad index")
                        }
                        (other, want) => panic!("batch {b} of {n}: bad at {want:?}, got {other:?}"),
                    }
                    if tickets.len() > 8 {
                        tickets.remove(0).wait().unwrap();
                    }
                }
                tickets.into_iter().for_each(|t| t.wait().unwrap());
            });
        }
    });
    let (got, ys) = (marks.read().unwrap(), ys.read().unwrap());
    for (b, (&at, &n)) in starts.iter().zip(&sizes).enumerate() {
        let want = u32::from(bads[b].is_empty());
        let wrong: Vec<_> =
            (at..at + n).map(|k| (k - at, if axpy(b, k) { ys[k] as u32 } else { got[k] })).filter(|&(_, v)| v != want).take(10).collect();
        assert!(wrong.is_empty(), "batch {b} of {n} (bad at {:?}): tasks not run {want} times (index, count): {wrong:?}", bads[b]);
    }
}

/// `Batch::pipelined` from `threads` threads at once, `batches` each of 4096-20,000
/// marks (fresh random sizes), half of them with a refused task at a random place: a
/// batch that passes runs whole, exactly once; a refused one ran exactly its tasks
/// before the reported `ran` (at most the bad index, 0 when the refusal is reported as
/// `submit` reports it) and none after.
pub fn pipelined_batches_exactly_once_or_partly(rt: &Runtime, threads: usize, batches: usize) {
    let mut rng = rand::rng();
    let sizes: Vec<usize> = (0..threads * batches).map(|_| rng.random_range(4096..20_000)).collect();
    let bads: Vec<Option<usize>> = sizes.iter().map(|&n| rng.random_bool(0.5).then(|| rng.random_range(0..n))).collect();
    let n: usize = sizes.iter().sum();
    let marks = rt.buffer_from(&vec![0u32; n]).unwrap();
    let ran: Vec<usize> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|th| {
                let (marks, sizes, bads) = (&marks, &sizes, &bads);
                s.spawn(move || {
                    let mut at: usize = sizes[..th * batches].iter().sum();
                    let mut ran = vec![];
                    for b in th * batches..(th + 1) * batches {
                        let mut tasks: Vec<Task> = (at..at + sizes[b]).map(|k| Task::mark(marks.all(), k as u32)).collect();
                        if let Some(i) = bads[b] {
                            tasks[i] = Task::mark(marks.slice(0..1), 5);
                        }
                        ran.push(match (rt.batch(&tasks).pipelined().submit(), bads[b]) {
                            (Ok(t), None) => {
                                t.wait().unwrap();
                                sizes[b]
                            }
                            (Err(Error::PartlyRun { ran, cause, ran_failed }), Some(i)) => {
                                assert!(matches!(*cause, Error::InvalidTask { index, .. } if index == i), "batch {b}: {cause:?}");
                                assert_eq!(ran_failed, None, "batch {b}");
                                assert!(ran > 0 && ran <= i, "batch {b}: ran {ran}, bad at {i}");
                                ran
                            }
                            (Err(Error::InvalidTask { index, .. }), Some(i)) if index == i => 0,
                            (other, bad) => panic!("batch {b}, bad at {bad:?}: {:?}", other.map(|_| ())),
                        });
                        at += sizes[b];
                    }
                    ran
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let got = marks.read().unwrap();
    let mut at = 0;
    for (b, (&len, &r)) in sizes.iter().zip(&ran).enumerate() {
        let wrong: Vec<_> = (at..at + len).filter(|&k| got[k] != u32::from(k - at < r)).take(5).map(|k| (k - at, got[k])).collect();
        assert!(wrong.is_empty(), "batch {b} of {len}, ran {r}, bad at {:?}: marks (index, count) {wrong:?}", bads[b]);
        at += len;
    }
    eprintln!("pipelined batches: ran {ran:?} of {sizes:?}");
}

/// A large batch whose first task signals a counter that a task already in the ring
/// waits for, with the ring half full behind that waiter: the batch's first pieces
/// must be published as soon as they have room, before its last ones can (they get
/// room only once the waiter runs). Found in review: a large batch that
/// waited for the room of all its pieces before publishing any hung here.
///
/// A wait on a later task lies outside the no-deadlock promise (docs/protocol.md,
/// "Dependencies"); what this checks is that nothing holds a piece back beyond its own
/// room. On CUDA a piece's room includes one of the `LIST_RUNS` (64) run-table
/// entries (a run of up to 1024 tasks each), so the ring given here holds at most
/// 16Ki tasks: 16 runs, within the table. Both submissions run on a thread of their
/// own: if one of them is stuck, the timeout closes the runtime, which ends its wait
/// for room.
pub fn large_batch_signal_releases_a_waiter(rt: &Runtime) {
    let cap = rt.backend().capacity;
    assert!(cap <= 1 << 14, "a ring of at most 16 runs of 1024 (within CUDA's run table)");
    let c = rt.counter().unwrap();
    let waiter = rt.submit(&[Task::noop(0).after(c.id(), 1)]).unwrap();
    let filler = vec![Task::noop(0); cap / 2];
    // Its first piece (4096 tasks on the CPU backend, 1024 on CUDA) fits beside the
    // filler; its last does not until the waiter ran.
    let mut batch = vec![Task::noop(1); cap / 2];
    batch[0] = Task::noop(2).signals(c.id());
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            let filler = rt.submit(&filler)?;
            let batch = rt.submit(&batch)?;
            filler.wait().and(batch.wait())
        });
        let r = waiter.wait_timeout(std::time::Duration::from_secs(10));
        if r.is_err() {
            // Stuck: shutdown aborts the submit's wait for room, so the test ends.
            let _ = rt.close();
        }
        let submitted = h.join().unwrap();
        assert_eq!(r, Ok(()), "the waiter was never released by the batch's first task");
        assert_eq!(submitted, Ok(()));
    });
}

/// Large batches (checked after their reservation, on the shared helpers) from three
/// producers at once, a third of them refused (a buffer dropped just before the submit,
/// named in the middle), beside buffer and counter churn (the registries' write lock),
/// `Batch::try_submit` and small batches: every producer's good batches run exactly once, every
/// refusal names its bad task, nothing hangs.
pub fn large_batches_beside_drops(rt: &Runtime) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let producers: Vec<_> = [5000usize, 9000, 20000]
            .into_iter()
            .map(|n| {
                s.spawn(move || {
                    let marks = rt.buffer_from(&vec![0u32; n]).unwrap();
                    let mut rounds = 0u32;
                    for r in 0..12 {
                        let mut batch: Vec<Task> = (0..n).map(|k| Task::mark(marks.all(), k as u32)).collect();
                        if r % 3 == 2 {
                            let doomed = rt.buffer_from(&[0u32; 4]).unwrap();
                            batch[n / 2 + 1] = Task::mark(doomed.all(), 0);
                            drop(doomed);
                            match rt.submit(&batch) {
                                Err(Error::InvalidTask { index, .. }) => assert_eq!(index, n / 2 + 1),
                                other => panic!("{n}: expected a refusal, got {:?}", other.map(|_| ())),
                            }
                        } else {
                            let _ = rt.submit(&batch).unwrap();
                            rounds += 1;
                        }
                    }
                    rt.submit(&[Task::noop(0)]).unwrap().wait_timeout(std::time::Duration::from_secs(30)).unwrap();
                    assert!(marks.read().unwrap().iter().all(|&m| m == rounds), "{n}: not exactly once");
                })
            })
            .collect();
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                drop(rt.buffer_from(&[0u32; 16]).unwrap());
                drop(rt.counter().unwrap());
            }
        });
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let _ = rt.batch(&[Task::noop(0); 8]).try_submit();
                let _ = rt.submit(&[Task::noop(0); 3]).unwrap();
            }
        });
        for p in producers {
            p.join().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
    });
}

/// Several futures of one ticket: each polled with wakers that change between polls,
/// some dropped before the ticket is done, some on other threads. Every remaining one
/// is woken and resolves; dropping one cancels nothing else.
pub fn many_futures_one_ticket(rt: &Runtime) {
    use futures::FutureExt;
    use futures::task::noop_waker;
    use std::task::{Context, Poll};
    // Long enough that every future registers (its first poll's spin gives up).
    let t = rt.submit(&[Task::spin(200_000_000)]).unwrap();
    let mut dropped = t.wait_async();
    let waker = noop_waker();
    assert!(dropped.poll_unpin(&mut Context::from_waker(&waker)).is_pending());
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| assert_eq!(futures::executor::block_on(t.wait_async()), Ok(())));
        }
        // One future polled first with a waker that is then dropped, then awaited with
        // the executor's: the latest waker is the one woken.
        let mut f = t.wait_async();
        let w = noop_waker();
        assert!(f.poll_unpin(&mut Context::from_waker(&w)).is_pending());
        drop(dropped);
        assert_eq!(futures::executor::block_on(f), Ok(()));
    });
    // A future made after the ticket is done is ready at once.
    let mut late = t.wait_async();
    assert_eq!(late.poll_unpin(&mut Context::from_waker(&noop_waker())), Poll::Ready(Ok(())));
}

/// Tasks written in place through reservations: exactly once, from several threads at
/// once beside plain submits; a refused push writes nothing and the reservation goes
/// on; unwritten slots of a committed or dropped reservation run as no-ops and hold
/// nothing back; a full reservation refuses more.
pub fn reservations_exactly_once(rt: &Runtime, threads: usize, per_thread: usize) {
    let n = threads * per_thread;
    let marks = rt.buffer_from(&vec![0u32; n]).unwrap();
    std::thread::scope(|s| {
        for th in 0..threads {
            let (rt, marks) = (&rt, &marks);
            s.spawn(move || {
                let mut rng = rand::rng();
                let mut i = th * per_thread;
                let end = (th + 1) * per_thread;
                let mut tickets = vec![];
                while i < end {
                    // A reservation holds at most the ring (two slots spare below).
                    let len = match rng.random_range(0..6) {
                        0 => rng.random_range(1000..6000),
                        1 => rng.random_range(1..4),
                        _ => rng.random_range(4..300),
                    }
                    .min(end - i)
                    .min(rt.backend().capacity - 2);
                    let tasks: Vec<Task> = (i..i + len).map(|k| Task::mark(marks.all(), k as u32)).collect();
                    match rng.random_range(0..3) {
                        0 => tickets.push(rt.submit(&tasks).unwrap()),
                        1 => {
                            let mut r = rt.reserve(len).unwrap();
                            r.extend(&tasks).unwrap();
                            tickets.push(r.commit().unwrap());
                        }
                        _ => {
                            // One by one, with a refused push now and then, and two
                            // slots more than needed (they run as no-ops).
                            let mut r = rt.reserve(len + 2).unwrap();
                            for (k, t) in tasks.iter().enumerate() {
                                if k % 97 == 5 {
                                    let bad = Task::mark(marks.slice(0..1), 3);
                                    match r.push(bad) {
                                        Err(Error::InvalidTask { index, .. }) => assert_eq!(index, k),
                                        other => panic!("a bad push: {other:?}"),
                                    }
                                }
                                r.push(*t).unwrap();
                            }
                            tickets.push(r.commit().unwrap());
                        }
                    }
                    if tickets.len() > 8 {
                        tickets.remove(0).wait().unwrap();
                    }
                    i += len;
                }
                tickets.into_iter().for_each(|t| t.wait().unwrap());
            });
        }
    });
    let got = marks.read().unwrap();
    let bad: Vec<_> = got.iter().enumerate().filter(|(_, v)| **v != 1).take(10).collect();
    assert!(bad.is_empty(), "tasks not run exactly once (index, count): {bad:?}");
    // A dropped reservation, half written, holds nothing back; a full one refuses more.
    let mut r = rt.reserve(10).unwrap();
    r.push(Task::noop(1)).unwrap();
    drop(r);
    let mut r = rt.reserve(2).unwrap();
    r.extend(&[Task::noop(1), Task::noop(2)]).unwrap();
    assert!(matches!(r.push(Task::noop(3)), Err(Error::ReservationFull(2))));
    assert!(matches!(r.extend(&[Task::noop(3)]), Err(Error::ReservationFull(2))));
    // While it is open, this thread can reserve nothing else of this runtime (it would
    // wait for itself); another thread can, and waits for it.
    assert!(matches!(rt.submit(&[Task::noop(3)]), Err(Error::ReservationOpen)));
    assert!(matches!(rt.reserve(1), Err(Error::ReservationOpen)));
    std::thread::scope(|s| {
        let other = s.spawn(|| rt.submit(&[Task::noop(4)]).unwrap().wait());
        std::thread::sleep(std::time::Duration::from_millis(20));
        r.commit().unwrap().wait().unwrap();
        other.join().unwrap().unwrap();
    });
    rt.submit(&[Task::noop(0)]).unwrap().wait().unwrap();
}

/// A batch submitted with options (`Runtime::batch`): inline results kept, with or
/// without pipelining (a batch large enough to be published in pieces), refused rather
/// than waited for; the combinations that cannot be are refused, typed, before
/// anything is submitted.
pub fn batch_options(rt: &Runtime) {
    let tags: Vec<u64> = (0..6000).map(|i| i * 7 + 3).collect();
    let tasks: Vec<Task> = tags.iter().map(|&t| Task::noop(t)).collect();
    assert_eq!(rt.batch(&tasks).results().submit().unwrap().results().unwrap(), tags);
    assert_eq!(rt.batch(&tasks).results().pipelined().submit().unwrap().results().unwrap(), tags);
    assert_eq!(rt.batch(&tasks[..64]).results().try_submit().unwrap().results().unwrap(), tags[..64]);
    // Without `results` a ticket keeps none.
    assert!(rt.batch(&tasks[..64]).pipelined().submit().unwrap().results().is_err());
    assert!(matches!(rt.batch(&tasks).pipelined().try_submit(), Err(Error::Config(_))));
    // SAFETY: noops, and refused before anything is submitted.
    assert!(matches!(unsafe { rt.batch(&tasks).pipelined().submit_unchecked() }, Err(Error::Config(_))));
    let before = rt.metrics().submitted;
    rt.wait_idle().unwrap();
    assert_eq!(rt.metrics().completed, before);
}
