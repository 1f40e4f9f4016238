//! Failure scenarios (docs/reliability.md has the table): device faults injected as
//! tasks, hung tasks and the watchdog, bounded shutdown, typed errors for every refusal.
//! Each runs on both backends; on the CPU a "trap" or "illegal address" panics a worker
//! thread, which the runtime turns into the same `DeviceFault` as a dead kernel.

use resident::{Error, Rejection, Runtime, Status, Task, Ticket};
use std::time::{Duration, Instant};

/// Multiplies every time bound of these scenarios: set `RESIDENT_TIME_SCALE` (an
/// integer) when running under compute-sanitizer, which slows kernels many times.
pub fn time_scale() -> u32 {
    std::env::var("RESIDENT_TIME_SCALE").ok().and_then(|v| v.parse().ok()).unwrap_or(1).max(1)
}

/// `d` scaled by [`time_scale`].
pub fn scaled(d: Duration) -> Duration {
    d * time_scale()
}

/// Waits for `t` with a timeout and says how long it took; a `Timeout` here means a
/// ticket that did not resolve: the failure these scenarios exist to catch.
fn resolve(t: &Ticket, bound: Duration) -> (resident::Result<()>, Duration) {
    let start = Instant::now();
    let r = t.wait_timeout(bound);
    (r, start.elapsed())
}

/// Which fault to inject.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    Trap,
    /// A store through this forged address.
    IllegalAddress(u64),
}

impl Fault {
    pub fn task(self) -> Task {
        // SAFETY: the point of the scenario: the task kills the runtime's workers.
        unsafe {
            match self {
                Fault::Trap => Task::fault_trap(),
                Fault::IllegalAddress(a) => Task::fault_illegal_address(a),
            }
        }
    }
}

/// What a new runtime does in the process where the fault happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Afterwards {
    /// It works (the CPU backend: a dead worker thread leaves nothing behind).
    Works,
    /// It is refused at once with `DeviceFault` saying to restart the process (CUDA:
    /// a trap or an illegal address leaves a sticky error that no context of the
    /// process, primary or not, new or old, survives; docs/reliability.md).
    Refused,
}

/// A device fault injected while other work is in flight: every outstanding ticket
/// resolves (with `DeviceFault`, or with what it completed with before the fault)
/// within `bound`; the runtime reports the fault from `health`, refuses new work with
/// it, and shuts down within `bound`; then a new runtime from `make`, in the same
/// process, runs 1000 tasks correctly or is refused with a typed error
/// (`afterwards`). Returns the number of tickets the fault resolved.
pub fn device_fault_recovers(make: impl Fn() -> resident::Result<Runtime>, fault: Fault, bound: Duration, afterwards: Afterwards) -> usize {
    let bound = scaled(bound);
    let faulted = {
        let rt = make().expect("a runtime before the fault");
        let marks = rt.buffer_from(&[0u32; 64]).unwrap();
        let mut before: Vec<Ticket> = (0..2).map(|_| rt.submit(&[Task::spin(1_000_000_000)]).unwrap()).collect();
        before.push(rt.submit(&(0..32).map(|i| Task::mark(marks.all(), i)).collect::<Vec<_>>()).unwrap());
        let batch = [Task::mark(marks.all(), 40), fault.task(), Task::mark(marks.all(), 41)];
        // SAFETY: fault injection; the runtime must survive it.
        let victim = unsafe { rt.batch(&batch).submit_unchecked() }.unwrap();
        // Submits right after the fault: accepted (and then resolved), or refused with
        // the fault if a health poll saw it first.
        let after: Vec<Ticket> = (0..4)
            .filter_map(|i| match rt.submit(&[Task::noop(i), Task::spin(1_000_000_000)]) {
                Ok(t) => Some(t),
                Err(Error::DeviceFault(_)) => None,
                Err(e) => panic!("{fault:?}: a submit after the fault: {e:?}"),
            })
            .collect();

        let (r, took) = resolve(&victim, bound);
        assert!(matches!(r, Err(Error::DeviceFault(_))), "{fault:?}: the faulting ticket resolved with {r:?}");
        assert!(took < bound, "{fault:?}: the faulting ticket took {took:?}");
        let mut faulted = 1;
        for t in before.iter().chain(&after) {
            let (r, took) = resolve(t, bound);
            match r {
                Err(Error::DeviceFault(_)) => faulted += 1,
                // Completed before the fault. A spin that the fault's abort ended (the
                // CPU's workers abort when one of them dies) resolves with the fault,
                // never `TaskFailed { Aborted }`.
                Ok(()) => {}
                other => panic!("{fault:?}: an outstanding ticket resolved with {other:?}"),
            }
            assert!(took < bound, "{fault:?}: a ticket took {took:?} to resolve");
        }
        assert!(matches!(rt.health(), Err(Error::DeviceFault(_))), "the runtime reports the fault");
        assert!(matches!(rt.health().err(), Some(Error::DeviceFault(_))));
        assert!(matches!(rt.submit(&[Task::noop(0)]), Err(Error::DeviceFault(_))), "later submits fail with the fault");
        assert!(matches!(rt.buffer::<f32>(16), Err(Error::DeviceFault(_))));
        drop((before, after, victim, marks));
        let start = Instant::now();
        let r = rt.shutdown();
        assert!(matches!(r, Err(Error::DeviceFault(_))), "shutdown reports the fault: {r:?}");
        assert!(start.elapsed() < bound, "shutdown after a fault took {:?}", start.elapsed());
        faulted
    };
    // Everything of the faulted runtime is gone.
    match afterwards {
        Afterwards::Works => {
            let rt = make().expect("a new runtime after the fault");
            super::axpy_matches_reference(&rt, 500, 256);
            super::exactly_once_many_producers(&rt, 2, 250, 50);
            rt.shutdown().unwrap();
            eprintln!("{fault:?}: {faulted} tickets resolved with DeviceFault; a new runtime ran 1000 tasks");
        }
        Afterwards::Refused => {
            let start = Instant::now();
            match make() {
                Err(Error::DeviceFault(why)) => {
                    assert!(why.contains("restart the process"), "{fault:?}: the refusal says what to do: {why}");
                    assert!(start.elapsed() < bound, "{fault:?}: the refusal took {:?}", start.elapsed());
                    eprintln!(
                        "{fault:?}: {faulted} tickets resolved with DeviceFault; a new runtime in this process was refused in {:?}: {why}",
                        start.elapsed()
                    );
                }
                Ok(_) => panic!(
                    "{fault:?}: a new runtime started in the faulted process: CUDA recovered in-process; docs/reliability.md says it cannot"
                ),
                Err(e) => panic!("{fault:?}: a new runtime in the faulted process: {e:?}"),
            }
        }
    }
    faulted
}

/// The watchdog: a task that never ends (`Task::hang`, which polls `abort`) stalls the
/// oldest segment; past `deadline` the runtime aborts the workers and every
/// outstanding ticket fails with `TaskHung`, even with nobody waiting (the notifier
/// thread watches). A later runtime works. `make` must set `task_deadline`.
pub fn watchdog_ends_hung_task(make: impl Fn() -> Runtime, deadline: Duration) {
    let bound = scaled(deadline * 4 + Duration::from_secs(5));
    {
        let rt = make();
        let marks = rt.buffer_from(&[0u32; 8]).unwrap();
        let hung = rt.submit(&[Task::mark(marks.all(), 0), Task::hang()]).unwrap();
        let later: Vec<Ticket> = (0..4).map(|i| rt.submit(&[Task::mark(marks.all(), 1 + i)]).unwrap()).collect();
        // Nobody waits: the watchdog must fire on its own.
        let start = Instant::now();
        while rt.health().err().is_none() {
            assert!(start.elapsed() < bound, "the watchdog did not fire within {bound:?} (deadline {deadline:?})");
            std::thread::sleep(Duration::from_millis(10));
        }
        let fired = start.elapsed();
        assert!(fired + Duration::from_millis(20) >= deadline, "the watchdog fired after {fired:?}, before the deadline {deadline:?}");
        match rt.health().err() {
            Some(Error::TaskHung { seq, deadline: d }) => {
                assert_eq!(seq, hung.first_seq(), "the hung segment is the oldest unfinished work");
                assert_eq!(d, deadline);
            }
            other => panic!("expected TaskHung, got {other:?}"),
        }
        let (r, took) = resolve(&hung, bound);
        assert!(matches!(r, Err(Error::TaskHung { .. })), "hung ticket: {r:?}");
        assert!(took < Duration::from_secs(1) * time_scale(), "an already failed ticket resolves at once ({took:?})");
        for t in &later {
            match resolve(t, bound).0 {
                // Completed before the abort, or failed with the watchdog's error.
                Ok(()) | Err(Error::TaskHung { .. }) => {}
                other => panic!("a ticket after the hung one: {other:?}"),
            }
        }
        assert!(matches!(rt.health(), Err(Error::TaskHung { .. })));
        assert!(matches!(rt.submit(&[Task::noop(0)]), Err(Error::TaskHung { .. })));
        drop((hung, later, marks));
        let start = Instant::now();
        let _ = rt.shutdown();
        assert!(start.elapsed() < bound, "shutdown after the watchdog took {:?}", start.elapsed());
        eprintln!("watchdog fired {fired:?} after the hang (deadline {deadline:?})");
    }
    let rt = make();
    super::exactly_once_many_producers(&rt, 2, 500, 100);
}

/// The watchdog does not fire on work that progresses: many short tasks, each far
/// below the deadline, over several deadlines' time. `rt` must have a deadline.
pub fn watchdog_spares_progressing_work(rt: &Runtime, deadline: Duration, task: Duration) {
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < deadline * 3 {
        let batch: Vec<Task> = (0..8).map(|_| Task::spin(task.as_nanos() as u64)).collect();
        rt.submit(&batch).unwrap().wait().unwrap();
        n += 8;
    }
    // Idle for longer than the deadline: an idle queue is no hung task.
    std::thread::sleep(deadline * 2);
    rt.submit(&[Task::noop(1)]).unwrap().wait().unwrap();
    assert_eq!(rt.health(), Ok(()));
    eprintln!("watchdog spared {n} tasks over {:?}", start.elapsed());
}

/// Dropping the runtime with tasks in flight that cannot finish returns within
/// `shutdown_timeout + 5 s` (the abort grace) and resolves every ticket (tickets keep
/// the runtime's memory alive, so they can be waited on after the drop).
pub fn drop_with_hung_tasks_is_bounded(rt: Runtime, workers_hint: usize, shutdown_timeout: Duration) {
    let tickets: Vec<Ticket> = (0..workers_hint + 4).map(|_| rt.submit(&[Task::hang()]).unwrap()).collect();
    let start = Instant::now();
    drop(rt);
    let took = start.elapsed();
    let bound = shutdown_timeout + scaled(Duration::from_secs(6));
    assert!(took < bound, "drop took {took:?}, bound {bound:?}");
    for t in &tickets {
        match t.try_wait() {
            Some(Err(Error::ShutDown) | Err(Error::TaskFailed { status: Status::Aborted, .. })) => {}
            other => panic!("ticket after drop: {other:?}"),
        }
    }
    eprintln!("drop with {} hung tickets returned in {took:?}", tickets.len());
}

/// Dropping the runtime with short tasks in flight drains them: every ticket succeeds.
pub fn drop_drains_short_tasks(rt: Runtime, count: usize) {
    let c = rt.buffer_from(&vec![0u32; count]).unwrap();
    let tickets: Vec<Ticket> = (0..count).map(|i| rt.submit(&[Task::spin(100_000), Task::mark(c.all(), i as u32)]).unwrap()).collect();
    drop(rt);
    for t in &tickets {
        assert_eq!(t.try_wait(), Some(Ok(())), "drained by drop");
    }
    assert!(c.read().unwrap().iter().all(|&v| v == 1));
}

/// A producer blocked waiting for ring space that hung tasks never free does not block
/// `close`: past `shutdown_timeout` the workers are aborted, the producer's submit
/// fails with `ShutDown`, and `close` returns `Timeout`, all within a bound. Needs a
/// small ring.
pub fn close_with_stuck_producer_is_bounded(rt: Runtime, shutdown_timeout: Duration) {
    let cap = rt.backend().capacity;
    let fill = rt.submit(&vec![Task::hang(); cap]).unwrap();
    let bound = shutdown_timeout + scaled(Duration::from_secs(6));
    std::thread::scope(|s| {
        let producer = s.spawn(|| rt.submit(&vec![Task::noop(0); cap]));
        std::thread::sleep(Duration::from_millis(100));
        let start = Instant::now();
        let r = rt.close();
        let took = start.elapsed();
        assert_eq!(r, Err(Error::Timeout), "a drain that cannot finish times out");
        assert!(took < bound, "close took {took:?}");
        let p = producer.join().unwrap();
        assert!(matches!(p, Err(Error::ShutDown) | Ok(_)), "the stuck producer: {p:?}");
        if let Ok(t) = p {
            assert!(t.try_wait().is_some_and(|r| r.is_err()), "its ticket is resolved");
        }
    });
    assert!(matches!(fill.try_wait(), Some(Err(_))), "the hung batch is resolved");
}

/// Every refusal at submit time is typed, and nothing of a refused batch runs: the
/// unchecked-only opcodes through the checked API (submit, lists), the unused opcodes
/// of the reliability range, oversized buffers, submits after shutdown.
pub fn typed_errors_for_refusals(rt: Runtime) {
    let c = rt.buffer_from(&[0u32; 4]).unwrap();
    // SAFETY: built, never submitted unchecked.
    let unchecked_only = unsafe { [Task::fault_trap(), Task::fault_illegal_address(8), Task::axpy_raw(1.0, 0, 0, 4)] };
    for t in unchecked_only {
        let want = |r: &Rejection| *r == Rejection::RequiresUnchecked(t.id());
        match rt.submit(&[Task::mark(c.all(), 0), t]) {
            Err(Error::InvalidTask { index: 1, reason }) => assert!(want(&reason), "{reason:?}"),
            other => panic!("checked submit of opcode {}: {other:?}", t.opcode),
        }
        assert!(matches!(rt.upload_tasks(&[t]), Err(Error::InvalidTask { index: 0, reason: Rejection::RequiresUnchecked(_) })));
        // Task::raw with the same opcode is the same task: refused too.
        assert!(matches!(rt.submit(&[Task::raw(t.opcode, t.args)]), Err(Error::InvalidTask { .. })));
    }
    for op in [35u16, 47, 0x8000] {
        assert!(
            matches!(rt.submit(&[Task::raw(op, [0; 12])]), Err(Error::InvalidTask { reason: Rejection::UnknownTask(o), .. }) if o.0 == op)
        );
        // The device refuses it too, typed.
        let t = unsafe { rt.batch(&[Task::raw(op, [0; 12])]).submit_unchecked() }.unwrap();
        assert!(matches!(t.wait(), Err(Error::TaskFailed { status: Status::InvalidOpcode, .. })), "device, opcode {op}");
    }
    assert_eq!(rt.buffer::<f32>(u32::MAX as usize + 1).err(), Some(Error::BufferTooLarge(u32::MAX as usize + 1)));
    assert_eq!(c.read().unwrap(), vec![0; 4], "no refused batch ran");
    rt.close().unwrap();
    assert_eq!(rt.submit(&[Task::noop(0)]).err(), Some(Error::ShutDown));
    assert_eq!(rt.batch(&[Task::noop(0)]).try_submit().err(), Some(Error::ShutDown));
    assert_eq!(unsafe { rt.batch(&[Task::noop(0)]).submit_unchecked() }.err(), Some(Error::ShutDown));
    assert_eq!(rt.health(), Ok(()), "a clean shutdown is no fault");
}

/// Raw device addresses reach tasks only through the `unsafe` API: `axpy_raw` on a
/// buffer's own address computes what `axpy` does; a misaligned address is refused by
/// the device with `BadArgs`.
pub fn raw_axpy_through_unsafe_api(rt: &Runtime) {
    let n = 4096u32;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let x = rt.buffer_from(&xs).unwrap();
    let y = rt.buffer_from(&vec![1.0f32; n as usize]).unwrap();
    let (xa, ya) = (x.raw_address(), y.raw_address());
    // SAFETY: both addresses hold n f32s and live until the ticket is done.
    let tasks: Vec<Task> = (0..4).map(|k| unsafe { Task::axpy_raw(2.0, xa + k * 4096, ya + k * 4096, n / 4) }).collect();
    unsafe { rt.batch(&tasks).submit_unchecked() }.unwrap().wait().unwrap();
    let got = y.read().unwrap();
    assert!(got.iter().zip(&xs).all(|(&g, &x)| g == 1.0 + 2.0 * x), "raw axpy result");
    let bad = unsafe { Task::axpy_raw(1.0, xa + 2, ya, 4) };
    let r = unsafe { rt.batch(&[bad]).submit_unchecked() }.unwrap().wait();
    assert!(matches!(r, Err(Error::TaskFailed { status: Status::BadArgs, .. })), "{r:?}");
}

/// Long enough that only an abort ends it within a test.
const LONG: u64 = 60_000_000_000;

/// Long enough for workers to claim what was published, and for a CPU worker that
/// claimed a faulting task to have panicked (both take microseconds).
const SETTLE: Duration = Duration::from_millis(200);

/// Resolves `t` with `try_wait` only: no health poll, so the runtime learns of the
/// fault only through what the ticket's own resolution says. `None` past `bound`.
fn try_resolve(t: &Ticket, bound: Duration) -> Option<resident::Result<()>> {
    let start = Instant::now();
    loop {
        if let Some(r) = t.try_wait() {
            return Some(r);
        }
        if start.elapsed() > bound {
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn is_fault(r: &resident::Result<()>) -> bool {
    matches!(r, Err(Error::DeviceFault(_)))
}

/// Every call a user can make on a runtime whose device faulted answers with the
/// fault: never `ShutDown`, `TaskFailed { Aborted }`, a driver error or success.
pub fn later_calls_answer_with_the_fault(rt: &Runtime) {
    let f = |what: &str, r: resident::Result<()>| assert!(is_fault(&r), "after the fault, {what}: {r:?}");
    f("submit", rt.submit(&[Task::noop(0)]).map(drop));
    f("try_submit", rt.batch(&[Task::noop(0)]).try_submit().map(drop));
    f("submit_for_results", rt.batch(&[Task::noop(0)]).results().submit().map(drop));
    f("submit_pipelined", rt.batch(&vec![Task::noop(0); 5000]).pipelined().submit().map(drop));
    // SAFETY: a noop.
    f("submit_unchecked", unsafe { rt.batch(&[Task::noop(0)]).submit_unchecked() }.map(drop));
    f("reserve", rt.reserve(4).map(drop));
    f("upload_tasks", rt.upload_tasks(&[Task::noop(0)]).map(drop));
    f("buffer", rt.buffer::<f32>(16).map(drop));
    f("buffer_from", rt.buffer_from(&[1u32; 4]).map(drop));
    f("counter", rt.counter().map(drop));
    f("wait_idle", rt.wait_idle());
    f("release", rt.sharing().release().map(drop));
    f("with_kernel_out", rt.sharing().with_kernel_out(|| ()));
    f("health", rt.health());
    assert!(matches!(rt.health().err(), Some(Error::DeviceFault(_))), "fault(): {:?}", rt.health().err());
}

/// A task faults while other tasks wait: on `spin` (it polls `abort`) and on a counter
/// nothing signals, each alone (an express ticket, resolved from its own record) and
/// inside a batch (resolved from its segment record, with and without kept results).
/// The fault's abort ends them all (`Status::Aborted` on the CPU, where the dying
/// worker raises `abort`), and every one of those tickets must resolve with the fault
/// (guarantee 5), even read with `try_wait` alone, which polls no health: the first
/// ticket read must record the fault, so that `Runtime::health` (no poll) says it. Then
/// every later call answers with it, `close` included, and after the close too. `rt`
/// needs six workers at least (five held, one for the fault).
pub fn fault_names_itself_to_aborted_tasks(rt: Runtime, fault: Fault, bound: Duration) {
    let bound = scaled(bound);
    let c = rt.counter().unwrap();
    let held: Vec<(&str, Ticket)> = vec![
        ("a lone spin", rt.submit(&[Task::spin(LONG)]).unwrap()),
        ("a spin in a batch", rt.submit(&[Task::noop(1), Task::spin(LONG)]).unwrap()),
        ("a lone counter wait", rt.submit(&[Task::noop(2).after(c.id(), 1)]).unwrap()),
        ("a counter wait in a batch", rt.submit(&[Task::noop(3), Task::noop(4).after(c.id(), 1)]).unwrap()),
        ("a counter wait kept for results", rt.batch(&[Task::noop(5), Task::noop(6).after(c.id(), 1)]).results().submit().unwrap()),
    ];
    std::thread::sleep(SETTLE);
    for (what, t) in &held {
        assert!(t.try_wait().is_none(), "{what} ended before the fault");
    }
    // SAFETY: fault injection; the runtime must survive it.
    let victim = unsafe { rt.batch(&[fault.task()]).submit_unchecked() }.unwrap();
    for (what, t) in &held {
        match try_resolve(t, bound) {
            Some(r) => assert!(is_fault(&r), "{fault:?}: {what} resolved with {r:?}"),
            None => panic!("{fault:?}: {what} did not resolve within {bound:?}"),
        }
        assert!(matches!(rt.health().err(), Some(Error::DeviceFault(_))), "{fault:?}: {what} named the fault, which is not recorded");
    }
    // Read again: the outcome does not change.
    for (what, t) in &held {
        assert!(matches!(t.try_wait(), Some(Err(Error::DeviceFault(_)))), "{what}, read again");
        assert!(is_fault(&t.wait()), "{what}, waited");
    }
    assert!(is_fault(&victim.wait_timeout(bound)), "the faulting ticket");
    later_calls_answer_with_the_fault(&rt);
    let r = rt.close();
    assert!(is_fault(&r), "close: {r:?}");
    assert!(is_fault(&rt.close()), "close again");
    // After the close, the fault still, not `ShutDown`.
    later_calls_answer_with_the_fault(&rt);
}

/// As [`fault_names_itself_to_aborted_tasks`], for futures: tasks waiting on `spin`
/// and on a counter, their tickets awaited (`wait_async`, woken by the notifier thread,
/// which scans before it polls health) when the fault ends them.
pub fn fault_names_itself_to_async_waiters(rt: Runtime, fault: Fault, bound: Duration) {
    let bound = scaled(bound);
    let c = rt.counter().unwrap();
    let held = [rt.submit(&[Task::spin(LONG)]).unwrap(), rt.submit(&[Task::noop(1).after(c.id(), 1)]).unwrap()];
    std::thread::sleep(SETTLE);
    std::thread::scope(|s| {
        let waiters: Vec<_> = held.iter().map(|t| s.spawn(move || futures::executor::block_on(t.wait_async()))).collect();
        std::thread::sleep(SETTLE);
        // SAFETY: fault injection.
        let victim = unsafe { rt.batch(&[fault.task()]).submit_unchecked() }.unwrap();
        let start = Instant::now();
        for w in waiters {
            let r = w.join().unwrap();
            assert!(is_fault(&r), "{fault:?}: an awaited ticket resolved with {r:?}");
        }
        assert!(start.elapsed() < bound, "the futures took {:?}", start.elapsed());
        assert!(is_fault(&victim.wait_timeout(bound)));
    });
    later_calls_answer_with_the_fault(&rt);
}

/// The runtime is closed after a fault that nobody has seen yet (no waiter, no health
/// poll: a careless user drops or closes a runtime whose tickets it never waited on):
/// `close` reports the fault, every ticket resolves with it (not `ShutDown`, not
/// `TaskFailed { Aborted }` from the drain's last scan), and so does every later call.
pub fn close_after_an_unseen_fault_names_it(rt: Runtime, fault: Fault) {
    let c = rt.counter().unwrap();
    let held = [rt.submit(&[Task::spin(LONG)]).unwrap(), rt.submit(&[Task::noop(1).after(c.id(), 1)]).unwrap()];
    std::thread::sleep(SETTLE);
    // SAFETY: fault injection.
    let victim = unsafe { rt.batch(&[fault.task()]).submit_unchecked() }.unwrap();
    std::thread::sleep(SETTLE);
    let r = rt.close();
    assert!(is_fault(&r), "{fault:?}: close after an unseen fault: {r:?}");
    for t in held.iter().chain([&victim]) {
        let r = t.try_wait();
        assert!(matches!(r, Some(Err(Error::DeviceFault(_)))), "{fault:?}: a ticket after the close: {r:?}");
    }
    later_calls_answer_with_the_fault(&rt);
}

/// Producers submit, by every path (submit, try_submit, submit_pipelined, reserve,
/// task lists, buffers, counters), while a task has just faulted and another thread
/// closes the runtime: the fault came first, so every refusal names it, never
/// `ShutDown`, and every ticket accepted resolves with it (or `Ok`). The producers
/// start together with the close, on a fault nobody has polled yet: those that find
/// the runtime closing before a health poll of theirs saw the fault are the case.
/// `rounds` fresh runtimes from `make`.
pub fn producers_racing_a_fault_get_the_fault(make: impl Fn() -> Runtime, fault: Fault, rounds: usize, producers: usize) {
    let bound = scaled(Duration::from_secs(20));
    for round in 0..rounds {
        let rt = make();
        let held = rt.submit(&[Task::spin(LONG)]).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        // SAFETY: fault injection.
        let victim = unsafe { rt.batch(&[fault.task()]).submit_unchecked() }.unwrap();
        // Long enough for a worker to have run the fault (so that the close below comes
        // after it, unseen), on a loaded machine too.
        std::thread::sleep(SETTLE);
        let go = std::sync::Barrier::new(producers + 1);
        let tickets: Vec<Ticket> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..producers)
                .map(|p| {
                    let (rt, go) = (&rt, &go);
                    s.spawn(move || {
                        go.wait();
                        let mut tickets = vec![];
                        for i in 0..50usize {
                            let r: resident::Result<Option<Ticket>> = match (p + i) % 7 {
                                0 => rt.submit(&[Task::noop(i as u64)]).map(Some),
                                1 => match rt.batch(&[Task::noop(i as u64)]).try_submit() {
                                    Err(Error::QueueFull | Error::WouldBlock) => Ok(None),
                                    r => r.map(Some),
                                },
                                2 => rt.batch(&vec![Task::noop(0); 5000]).pipelined().submit().map(Some),
                                3 => rt
                                    .reserve(2)
                                    .and_then(|mut r| {
                                        r.push(Task::noop(1))?;
                                        r.commit()
                                    })
                                    .map(Some),
                                4 => rt.upload_tasks(&[Task::noop(0)]).and_then(|l| l.submit()).map(Some),
                                5 => rt.buffer::<u32>(16).map(|_| None),
                                _ => rt.counter().map(|_| None),
                            };
                            match r {
                                Ok(t) => tickets.extend(t),
                                Err(Error::DeviceFault(_)) => {}
                                Err(e) => panic!("round {round}, producer {p}, call {i}: {e:?} (the device had faulted)"),
                            }
                        }
                        tickets
                    })
                })
                .collect();
            go.wait();
            let r = rt.close();
            assert!(is_fault(&r), "round {round}: close: {r:?}");
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        for t in tickets.iter().chain([&held, &victim]) {
            match t.wait_timeout(bound) {
                Ok(()) | Err(Error::DeviceFault(_)) => {}
                other => panic!("round {round}: a ticket: {other:?}"),
            }
        }
        later_calls_answer_with_the_fault(&rt);
    }
}

/// A buffer read (which waits for the tasks submitted since the buffer was made) after
/// a fault that nobody has polled yet: the workers are gone, and the read must say why
/// (the fault), not return the memory as if the tasks had drained.
pub fn read_after_an_unseen_fault_names_it(rt: Runtime, fault: Fault) {
    let marks = rt.buffer_from(&[0u32; 4]).unwrap();
    let before = rt.submit(&[Task::mark(marks.all(), 0)]).unwrap();
    // SAFETY: fault injection.
    let victim = unsafe { rt.batch(&[fault.task()]).submit_unchecked() }.unwrap();
    std::thread::sleep(SETTLE);
    let r = marks.read();
    assert!(matches!(r, Err(Error::DeviceFault(_))), "{fault:?}: a read after an unseen fault: {r:?}");
    assert!(matches!(rt.health().err(), Some(Error::DeviceFault(_))), "the read recorded it");
    assert!(matches!(before.wait(), Ok(()) | Err(Error::DeviceFault(_))));
    assert!(is_fault(&victim.wait()));
    later_calls_answer_with_the_fault(&rt);
}

/// Producers already submitting when the device faults (small batches, lone tasks,
/// pipelined batches, each producer waiting on some of its tickets): each goes on until
/// a call fails, and that failure is the fault, never `ShutDown`; every ticket any of
/// them got resolves with success or the fault; the close and every later call answer
/// with the fault.
pub fn producers_during_a_fault_get_the_fault(rt: Runtime, fault: Fault, producers: usize) {
    let bound = scaled(Duration::from_secs(20));
    let started = std::sync::Barrier::new(producers + 1);
    let tickets: Vec<Ticket> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..producers)
            .map(|p| {
                let (rt, started) = (&rt, &started);
                s.spawn(move || {
                    let mut tickets = vec![];
                    let deadline = Instant::now() + bound;
                    for i in 0usize.. {
                        if i == 20 {
                            started.wait();
                        }
                        assert!(Instant::now() < deadline, "producer {p}: no call failed within {bound:?} of the fault");
                        let r = match (p + i) % 4 {
                            0 => rt.submit(&[Task::noop(i as u64)]),
                            1 => rt.submit(&vec![Task::noop(i as u64); 64]),
                            2 => rt.batch(&vec![Task::noop(0); 5000]).pipelined().submit(),
                            _ => rt.batch(&[Task::noop(i as u64), Task::spin(1000)]).results().submit(),
                        };
                        match r {
                            Ok(t) if i % 8 == 0 => match t.wait_timeout(bound) {
                                Ok(()) => {}
                                Err(Error::DeviceFault(_)) => break,
                                other => panic!("producer {p}, call {i}: a ticket resolved with {other:?}"),
                            },
                            Ok(t) => tickets.push(t),
                            Err(Error::DeviceFault(_)) => break,
                            Err(e) => panic!("producer {p}, call {i}: {e:?} while the device faulted"),
                        }
                    }
                    tickets
                })
            })
            .collect();
        started.wait();
        // SAFETY: fault injection.
        let victim = unsafe { rt.batch(&[fault.task()]).submit_unchecked() };
        let mut all: Vec<Ticket> = hs.into_iter().flat_map(|h| h.join().unwrap()).collect();
        match victim {
            Ok(t) => all.push(t),
            Err(e) => assert!(is_fault(&Err(e.clone())), "the fault's own submission: {e:?}"),
        }
        all
    });
    for t in &tickets {
        match t.wait_timeout(bound) {
            Ok(()) | Err(Error::DeviceFault(_)) => {}
            other => panic!("{fault:?}: a ticket resolved with {other:?}"),
        }
    }
    later_calls_answer_with_the_fault(&rt);
    let r = rt.close();
    assert!(is_fault(&r), "{fault:?}: close: {r:?}");
    later_calls_answer_with_the_fault(&rt);
}
