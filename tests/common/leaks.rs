//! Leak checks: creating and dropping runtimes, with buffers, counters, task lists,
//! async waits (the notifier thread) and a watchdog, leaves the process as it found
//! it: the runtime's live allocations (`resident::live_allocations`: device, pinned,
//! host bytes), its threads, and, on a GPU, the device's free memory.
//!
//! Thread counts are process-wide: run these in a test binary of their own
//! (`tests/reliability_cpu.rs`) or under the GPU suite's one-at-a-time lock.

use resident::{Runtime, Task};
use std::time::{Duration, Instant};

/// Threads of this process (`/proc/self/task`); 0 where there is no procfs.
pub fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map(|d| d.count()).unwrap_or(0)
}

/// Threads the runtime started (named `resident-*`: CPU workers, the notifier).
pub fn runtime_threads() -> usize {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else { return 0 };
    dir.filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("comm")).ok()).filter(|c| c.starts_with("resident-")).count()
}

/// Resident set size of this process in bytes (`/proc/self/statm`); 0 if unknown.
pub fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()).unwrap_or(0) * 4096
}

/// One round of everything a runtime allocates or starts.
fn exercise(rt: &Runtime) {
    let x = rt.buffer_from(&vec![1.0f32; 1 << 16]).unwrap();
    let y = rt.buffer::<f32>(1 << 16).unwrap();
    let marks = rt.buffer::<u32>(1024).unwrap();
    let counter = rt.counter().unwrap();
    let list = rt
        .upload_tasks(
            &(0..64).map(|i| Task::axpy(1.0, x.slice(i * 1024..(i + 1) * 1024), y.slice(i * 1024..(i + 1) * 1024))).collect::<Vec<_>>(),
        )
        .unwrap();
    list.submit().unwrap().wait().unwrap();
    let t = rt.submit(&(0..1024).map(|i| Task::mark(marks.all(), i).signals(counter.id())).collect::<Vec<_>>()).unwrap();
    // An async wait starts the notifier thread.
    futures::executor::block_on(t.wait_async()).unwrap();
    assert_eq!(counter.value().unwrap(), 1024);
}

/// `rounds` runtimes from `make`, each exercised and dropped (with `fault`, the last
/// one dies of an injected trap first). After every round the live allocations and
/// the runtime's threads equal the baseline, and `device_used` (bytes in use on the
/// GPU, if measured) is within `slack` of it. On the CPU (no `device_used`) the whole
/// process's thread count must equal the baseline too; on a GPU the driver keeps
/// helper threads of its own, so only the runtime's are counted.
pub fn no_leaks_across_runtimes(make: impl Fn() -> Runtime, rounds: usize, fault: bool, device_used: impl Fn() -> Option<u64>, slack: u64) {
    // A first runtime warms up what the process keeps anyway (driver state, the
    // allocator's pools, thread-local areas), so the baseline is taken after it.
    drop(make());
    let base = (resident::live_allocations(), threads(), device_used());
    let cpu = base.2.is_none();
    assert_eq!(runtime_threads(), 0, "no runtime threads before the first round");
    eprintln!("baseline: {:?}, {} threads, device used {:?}", base.0, base.1, base.2);
    for round in 0..rounds {
        {
            let rt = make();
            exercise(&rt);
            if fault && round == rounds - 1 {
                // SAFETY: fault injection: the runtime must clean up after it.
                let t = unsafe { rt.batch(&[Task::fault_trap()]).submit_unchecked() }.unwrap();
                assert!(matches!(t.wait(), Err(resident::Error::DeviceFault(_))));
            }
        }
        // Threads are joined before drop returns; allow the OS a moment to reap them.
        let start = Instant::now();
        while (runtime_threads() > 0 || (cpu && threads() > base.1)) && start.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let now = (resident::live_allocations(), threads(), device_used());
        eprintln!("round {round}: {:?}, {} threads, device used {:?}", now.0, now.1, now.2);
        assert_eq!(now.0, base.0, "round {round}: allocations leaked");
        assert_eq!(runtime_threads(), 0, "round {round}: runtime threads leaked");
        if cpu {
            assert_eq!(now.1, base.1, "round {round}: threads leaked");
        }
        if let (Some(b), Some(n)) = (base.2, now.2) {
            assert!(n <= b + slack, "round {round}: device memory in use grew from {b} to {n} bytes");
        }
    }
}
