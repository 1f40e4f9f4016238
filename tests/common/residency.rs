//! Elastic residency: the resident kernel exits when idle and the next
//! submission relaunches it, with nothing lost and nothing run twice. Run by
//! `tests/residency_cpu.rs` (CI) and `tests/residency_gpu.rs` (on a GPU, ignored-marked),
//! each scenario in a child process under a time limit.

use resident::{Buffer, Residency, Runtime, RuntimeConfig, Task};
use std::time::{Duration, Instant};

/// `rt.sharing().release()` until it exits the kernel: right after a wait the completion
/// bookkeeping may lag a moment (a lone task that the relay ran itself is counted in its
/// segment when a worker reaches its slot).
fn release_soon(rt: &Runtime) {
    let start = Instant::now();
    while !rt.sharing().release().unwrap() {
        assert!(start.elapsed() < Duration::from_secs(5), "release never found the runtime idle");
        std::thread::yield_now();
    }
}

/// Every mark of `marks` is exactly 1: each task ran exactly once, none lost.
fn exactly_once(marks: &Buffer<u32>, what: &str) {
    let got = marks.read().unwrap();
    let bad: Vec<(usize, u32)> = got.iter().copied().enumerate().filter(|&(_, v)| v != 1).take(8).collect();
    assert!(bad.is_empty(), "{what}: marks not exactly 1 (index, count): {bad:?} of {}", got.len());
}

/// `cycles` exits and relaunches by `Sharing::release`, each cycle through every path:
/// a lone task (inline through the relay on CUDA), a small batch, a large batch (runs
/// over the host ring), a resident list uploaded before the first exit, a tree of
/// spawned tasks, and a dependency on a counter signalled in the cycle before.
pub fn cycles_exactly_once(base: fn() -> RuntimeConfig, cycles: u32) {
    // Exits by `release` only, so that the counts are exact (the default policy on a GPU
    // would add one whenever the test pauses for 10 ms).
    let rt = Runtime::with_config(RuntimeConfig { residency: Residency::Always, ..base() }).unwrap();
    const LARGE: u32 = 5000;
    const LIST: u32 = 300;
    let (depth, fanout) = (3, 4);
    let tree = Task::tree_nodes(depth, fanout).unwrap();
    let per = 1 + 16 + LARGE + tree + 1;
    let marks = rt.buffer::<u32>((cycles * per) as usize).unwrap();
    let listed = rt.buffer::<u32>((cycles * LIST) as usize).unwrap();
    // A list's tasks are fixed: one list per cycle, all uploaded before the first exit.
    let lists: Vec<_> = (0..cycles)
        .map(|c| rt.upload_tasks(&(0..LIST).map(|i| Task::mark(listed.all(), c * LIST + i)).collect::<Vec<_>>()).unwrap())
        .collect();
    let counter = rt.counter().unwrap();
    let mut exits = 0;
    for c in 0..cycles {
        let at = c * per;
        rt.submit(&[Task::mark(marks.all(), at)]).unwrap().wait().unwrap();
        rt.submit(&(1..17).map(|i| Task::mark(marks.all(), at + i)).collect::<Vec<_>>()).unwrap().wait().unwrap();
        let large: Vec<Task> = (0..LARGE).map(|i| Task::mark(marks.all(), at + 17 + i)).collect();
        let t = rt.submit(&large).unwrap();
        let l = (lists[c as usize]).submit().unwrap();
        let nodes = marks.slice((at + 17 + LARGE) as usize..(at + 17 + LARGE + tree) as usize);
        let tr = rt.submit(&[Task::tree(nodes, 0, depth, fanout)]).unwrap();
        // Waits for the signal of the cycle before (counter value c), given after that
        // cycle's exit.
        let dep = rt.submit(&[Task::mark(marks.all(), at + per - 1).after(counter.id(), c)]).unwrap();
        for t in [t, l, tr, dep] {
            t.wait().unwrap();
        }
        rt.submit(&[Task::noop(0).signals(counter.id())]).unwrap().wait().unwrap();
        // Idle now: the kernel exits.
        release_soon(&rt);
        exits += 1;
        let s = rt.metrics().residency;
        assert!(!s.resident, "cycle {c}: released but resident: {s:?}");
        assert!(!rt.sharing().release().unwrap(), "a second release of an exited runtime does nothing");
        // Host reads need no kernel.
        assert_eq!(marks.read().unwrap()[at as usize], 1);
    }
    let s = rt.metrics().residency;
    assert_eq!((s.exits, s.relaunches), (exits, exits - 1), "{s:?}");
    exactly_once(&marks, "cycles");
    exactly_once(&listed, "lists across cycles");
    assert_eq!(counter.value().unwrap(), cycles);
    rt.close().unwrap();
}

/// Producers submit with pauses while the kernel exits whenever the queue drains
/// (`Residency::WhenDrained`) and another thread asks for exits in a loop: every task
/// runs exactly once, and the kernel did exit and come back.
pub fn producers_race_exits(base: fn() -> RuntimeConfig, producers: u32, rounds: u32) {
    let rt = Runtime::with_config(RuntimeConfig { residency: Residency::WhenDrained, ..base() }).unwrap();
    let sizes = [1u32, 7, 64, 700, 4500];
    let per_round: u32 = sizes.iter().sum();
    let marks = rt.buffer::<u32>((producers * rounds * per_round) as usize).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            // Exits asked for from the outside too, racing the submissions.
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = rt.sharing().release().unwrap();
                std::thread::sleep(Duration::from_micros(30));
            }
        });
        let hs: Vec<_> = (0..producers)
            .map(|p| {
                let (rt, marks) = (&rt, &marks);
                s.spawn(move || {
                    let mut at = p * rounds * per_round;
                    for r in 0..rounds {
                        let size = sizes[(r as usize + p as usize) % sizes.len()];
                        let batch: Vec<Task> = (0..size).map(|i| Task::mark(marks.all(), at + i)).collect();
                        at += size;
                        let t = rt.submit(&batch).unwrap();
                        if r % 3 == 0 {
                            // Some batches wait, some are left in flight.
                            t.wait().unwrap();
                        }
                        if r % 4 == 1 {
                            std::thread::sleep(Duration::from_micros(200));
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        rt.wait_idle().unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let s = rt.metrics().residency;
    assert!(s.exits > 0 && s.relaunches > 0, "the kernel never exited and came back: {s:?}");
    // Each producer marked sizes in rotation; count what it covered.
    let got = marks.read().unwrap();
    for p in 0..producers {
        let mut at = (p * rounds * per_round) as usize;
        for r in 0..rounds {
            let size = sizes[(r as usize + p as usize) % sizes.len()] as usize;
            assert!(got[at..at + size].iter().all(|&v| v == 1), "producer {p} round {r}: not exactly once");
            at += size;
        }
        let end = ((p + 1) * rounds * per_round) as usize;
        assert!(got[at..end].iter().all(|&v| v == 0), "producer {p}: marks past its batches");
    }
    eprintln!("producers_race_exits: {s:?}");
    rt.close().unwrap();
}

/// `Residency::IdleExit`: the kernel exits after the idle time with nobody asking,
/// and a submission afterwards relaunches it; the first round trip after an exit
/// completes.
pub fn idle_exit_policy(base: fn() -> RuntimeConfig) {
    let rt = Runtime::with_config(RuntimeConfig { residency: Residency::IdleExit(Duration::from_millis(5)), ..base() }).unwrap();
    let marks = rt.buffer::<u32>(64).unwrap();
    for round in 0..4u32 {
        // An exit may come before the submission (the runtime sat idle 5 ms while it
        // started or between rounds): the submission then relaunches the kernel, and
        // the exit to wait for is one after it. The exit is counted once complete
        // (`resident` turns false while the workers still leave), so wait for both.
        let before = rt.metrics().residency.exits;
        rt.submit(&[Task::mark(marks.all(), round)]).unwrap().wait().unwrap();
        let start = Instant::now();
        loop {
            let s = rt.metrics().residency;
            if s.exits > before && !s.resident {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(5), "round {round}: no idle exit after 5 s: {s:?}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let s = rt.metrics().residency;
    assert!(s.exits >= 4 && s.relaunches >= 3, "{s:?}");
    // Busy work keeps it resident: a long task is not idleness.
    let before = rt.metrics().residency.exits;
    rt.submit(&[Task::spin(30_000_000)]).unwrap().wait().unwrap();
    assert!(rt.metrics().residency.exits <= before + 1, "exited while a task ran");
    let got = marks.read().unwrap();
    assert_eq!(&got[..4], &[1, 1, 1, 1]);
    assert!(got[4..].iter().all(|&v| v == 0));
    rt.close().unwrap();
}

/// Close and drop while the kernel is out; a runtime that never runs again shuts down
/// cleanly. And the idle-time check never takes a task waiting on a counter for
/// idleness: that task runs once the counter is signalled.
pub fn shutdown_while_exited(base: fn() -> RuntimeConfig) {
    let rt = Runtime::with_config(base()).unwrap();
    rt.submit(&[Task::noop(1)]).unwrap().wait().unwrap();
    release_soon(&rt);
    rt.close().unwrap();
    assert!(rt.submit(&[Task::noop(1)]).is_err());
    drop(rt);
    let rt = Runtime::with_config(base()).unwrap();
    release_soon(&rt);
    drop(rt);
    let rt = Runtime::with_config(RuntimeConfig { residency: Residency::WhenDrained, ..base() }).unwrap();
    let c = rt.counter().unwrap();
    let marks = rt.buffer::<u32>(1).unwrap();
    let t = rt.submit(&[Task::mark(marks.all(), 0).after(c.id(), 1)]).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(!rt.sharing().release().unwrap(), "a task waits: not idle");
    assert!(rt.metrics().residency.resident);
    rt.submit(&[Task::noop(0).signals(c.id())]).unwrap().wait().unwrap();
    t.wait().unwrap();
    exactly_once(&marks, "waiting task");
}

/// A fault after a relaunch is reported as any fault is: every ticket resolves with it.
///
/// # Safety (of the fault task)
/// Ends the runtime; on a GPU the process's context too: run it in a child process.
pub fn fault_after_relaunch(base: fn() -> RuntimeConfig) {
    let rt = Runtime::with_config(base()).unwrap();
    rt.submit(&[Task::noop(1)]).unwrap().wait().unwrap();
    release_soon(&rt);
    let t = unsafe { rt.batch(&[Task::fault_trap()]).submit_unchecked() }.unwrap();
    let r = t.wait_timeout(Duration::from_secs(20));
    assert!(matches!(r, Err(resident::Error::DeviceFault(_))), "{r:?}");
    assert!(matches!(rt.submit(&[Task::noop(1)]), Err(resident::Error::DeviceFault(_))));
}

/// A relaunch that fails (CPU: a worker thread refused, by the test hook, after three
/// of four started) gets its submission a typed error; the threads that did start are
/// stopped and joined, the runtime stays exited with its queue as it was, and the next
/// submission relaunches it. Many exits and relaunches after it: every task that was
/// accepted runs exactly once (stray workers from the failed start ran tasks twice).
pub fn failed_relaunch_recovers(base: fn() -> RuntimeConfig) {
    let workers = 4;
    // Starts 0-3 at construction; the first relaunch's fourth start (7) fails.
    let config = RuntimeConfig { residency: Residency::Always, cpu_workers: workers, fail_worker_start: Some(7), ..base() };
    let rt = Runtime::with_config(config).unwrap();
    let rounds = 60u32;
    let marks = rt.buffer::<u32>(2 + 8 * rounds as usize).unwrap();
    rt.submit(&[Task::mark(marks.all(), 0)]).unwrap().wait().unwrap();
    release_soon(&rt);
    let r = rt.submit(&[Task::mark(marks.all(), 1)]);
    assert!(matches!(r, Err(resident::Error::Config(_))), "{r:?}");
    let s = rt.metrics().residency;
    assert!(!s.resident && s.relaunches == 0, "{s:?}");
    for round in 0..rounds {
        // The refused batch took no sequence number; each of these relaunches.
        let at = 2 + 8 * round;
        rt.submit(&(at..at + 8).map(|i| Task::mark(marks.all(), i)).collect::<Vec<_>>()).unwrap().wait().unwrap();
        release_soon(&rt);
    }
    assert_eq!(rt.metrics().residency.relaunches, rounds as u64);
    let got = marks.read().unwrap();
    assert_eq!(got[0], 1);
    assert_eq!(got[1], 0, "the refused task never ran");
    let bad: Vec<(usize, u32)> = got.iter().copied().enumerate().skip(2).filter(|&(_, v)| v != 1).collect();
    assert!(bad.is_empty(), "not exactly once: {bad:?}");
    rt.close().unwrap();
}

/// `Sharing::with_kernel_out`: the kernel is out while `f` runs, whoever else submits
/// (they wait: their tasks run after `f`, exactly once), `f`'s own submissions and a
/// nested call are refused, `f` may make and drop buffers, a panic in `f` ends the hold,
/// and the next submission relaunches the kernel.
pub fn kernel_out(base: fn() -> RuntimeConfig) {
    let rt = Runtime::with_config(RuntimeConfig { residency: Residency::Always, ..base() }).unwrap();
    let marks = rt.buffer::<u32>(64).unwrap();
    rt.submit(&[Task::mark(marks.all(), 0)]).unwrap().wait().unwrap();
    let (started, ended) = (std::sync::Barrier::new(2), std::sync::atomic::AtomicBool::new(false));
    std::thread::scope(|s| {
        // Another thread submits while the kernel is out: it waits for `f`.
        let other = s.spawn(|| {
            started.wait();
            let t = rt.submit(&(1..33).map(|i| Task::mark(marks.all(), i)).collect::<Vec<_>>()).unwrap();
            assert!(ended.load(std::sync::atomic::Ordering::SeqCst), "a submission relaunched the kernel inside with_kernel_out");
            t.wait().unwrap();
        });
        let r = rt
            .sharing()
            .with_kernel_out(|| {
                assert!(!rt.metrics().residency.resident, "the kernel runs inside with_kernel_out");
                started.wait();
                // Own submissions and a nested call: refused, nothing reserved.
                assert!(matches!(rt.submit(&[Task::noop(1)]), Err(resident::Error::Config(_))));
                assert!(matches!(rt.batch(&[Task::noop(1)]).try_submit(), Err(resident::Error::Config(_))));
                assert!(matches!(rt.sharing().with_kernel_out(|| ()), Err(resident::Error::Config(_))));
                // Buffers come and go (a drop takes the registries' write lock, which
                // the waiting submitter must not hold).
                let b = rt.buffer::<f32>(1 << 10).unwrap();
                drop(b);
                std::thread::sleep(Duration::from_millis(50));
                assert!(!rt.metrics().residency.resident, "the kernel came back inside with_kernel_out");
                ended.store(true, std::sync::atomic::Ordering::SeqCst);
                7
            })
            .unwrap();
        assert_eq!(r, 7);
        other.join().unwrap();
    });
    // A queue that cannot drain (a task waits on a counter): the timed variant gives up,
    // gives the hold back, and nothing of `f` ran; the runtime goes on.
    let c = rt.counter().unwrap();
    let waiting = rt.submit(&[Task::noop(0).after(c.id(), 1)]).unwrap();
    let r = rt.sharing().with_kernel_out_timeout(Duration::from_millis(50), || panic!("ran"));
    assert!(matches!(r, Err(resident::Error::Timeout)), "{r:?}");
    rt.submit(&[Task::noop(0).signals(c.id())]).unwrap().wait().unwrap();
    waiting.wait().unwrap();
    // A panic in `f` ends the hold.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.sharing().with_kernel_out(|| panic!("in f"))));
    assert!(caught.is_err());
    rt.submit(&(33..64).map(|i| Task::mark(marks.all(), i)).collect::<Vec<_>>()).unwrap().wait().unwrap();
    assert!(rt.metrics().residency.resident);
    exactly_once(&marks, "kernel_out");
}
