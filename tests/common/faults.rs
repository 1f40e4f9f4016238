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
        let victim = unsafe { rt.submit_unchecked(&batch) }.unwrap();
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
                // Completed before the fault was seen (the spins end early on the CPU:
                // its workers abort when one of them dies).
                Ok(()) | Err(Error::TaskFailed { status: Status::Aborted, .. }) => {}
                other => panic!("{fault:?}: an outstanding ticket resolved with {other:?}"),
            }
            assert!(took < bound, "{fault:?}: a ticket took {took:?} to resolve");
        }
        assert!(matches!(rt.health(), Err(Error::DeviceFault(_))), "the runtime reports the fault");
        assert!(matches!(rt.fault(), Some(Error::DeviceFault(_))));
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
        while rt.fault().is_none() {
            assert!(start.elapsed() < bound, "the watchdog did not fire within {bound:?} (deadline {deadline:?})");
            std::thread::sleep(Duration::from_millis(10));
        }
        let fired = start.elapsed();
        assert!(fired + Duration::from_millis(20) >= deadline, "the watchdog fired after {fired:?}, before the deadline {deadline:?}");
        match rt.fault() {
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
    let cap = rt.capacity();
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
        let t = unsafe { rt.submit_unchecked(&[Task::raw(op, [0; 12])]) }.unwrap();
        assert!(matches!(t.wait(), Err(Error::TaskFailed { status: Status::InvalidOpcode, .. })), "device, opcode {op}");
    }
    assert_eq!(rt.buffer::<f32>(u32::MAX as usize + 1).err(), Some(Error::BufferTooLarge(u32::MAX as usize + 1)));
    assert_eq!(c.read().unwrap(), vec![0; 4], "no refused batch ran");
    rt.close().unwrap();
    assert_eq!(rt.submit(&[Task::noop(0)]).err(), Some(Error::ShutDown));
    assert_eq!(rt.try_submit(&[Task::noop(0)]).err(), Some(Error::ShutDown));
    assert_eq!(unsafe { rt.submit_unchecked(&[Task::noop(0)]) }.err(), Some(Error::ShutDown));
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
    unsafe { rt.submit_unchecked(&tasks) }.unwrap().wait().unwrap();
    let got = y.read().unwrap();
    assert!(got.iter().zip(&xs).all(|(&g, &x)| g == 1.0 + 2.0 * x), "raw axpy result");
    let bad = unsafe { Task::axpy_raw(1.0, xa + 2, ya, 4) };
    let r = unsafe { rt.submit_unchecked(&[bad]) }.unwrap().wait();
    assert!(matches!(r, Err(Error::TaskFailed { status: Status::BadArgs, .. })), "{r:?}");
}
