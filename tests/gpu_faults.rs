//! Fault injection on a GPU: a task that traps, one that stores through a forged
//! address (low and high), a hung task ended by the watchdog.
//!
//! A trap or an illegal address leaves a sticky error in the process: no context of
//! that process survives it, primary or not, old or new (probed on the H100,
//! docs/reliability.md). So each such scenario runs in a child process of its own (this
//! test binary again, running just that test): there every outstanding ticket must
//! resolve with `DeviceFault` within a bound, the runtime must report the fault and
//! refuse new work, shut down within the bound, and a new runtime in that process must
//! be refused at once with a typed error. The parent then checks that the device
//! serves a new runtime (1000 tasks checked against a reference) in a process of its
//! own. The watchdog's abort is no device fault: there a new runtime works in the same
//! process. Not run under compute-sanitizer, which reports the injected faults as the
//! errors they are. On a GPU:
//!
//!     <gpu_faults test binary> --include-ignored --test-threads=1
//!
//! Without a GPU these tests fail: `RuntimeConfig::cuda()` refuses to start.

mod common;
#[macro_use]
mod gpu_turns;

use common::faults::{Afterwards, Fault};
use resident::{Runtime, RuntimeConfig};
use std::time::{Duration, Instant};

fn config(f: impl FnOnce(&mut RuntimeConfig)) -> RuntimeConfig {
    let mut c = RuntimeConfig { capacity: 1 << 12, shutdown_timeout: Duration::from_secs(2), ..RuntimeConfig::cuda() };
    f(&mut c);
    c
}

fn gpu_with(f: impl FnOnce(&mut RuntimeConfig)) -> Runtime {
    let rt = Runtime::with_config(config(f)).expect("a CUDA GPU");
    eprintln!("{}", rt.backend());
    rt
}

const BOUND: Duration = Duration::from_secs(20);

/// Runs `scenario` in a child process (this binary, test `name` alone:
/// `common::isolate`), waits for it at most `bound` (killing it past that), and
/// requires it to pass; in the child, runs `scenario` itself. Then, in this process, a
/// new runtime must run 1000 tasks correctly: the fault stayed with the process that
/// had it.
fn in_child(name: &str, bound: Duration, scenario: impl FnOnce()) {
    if common::isolate::is_child(name) {
        scenario();
        return;
    }
    let start = Instant::now();
    common::isolate::run_child(name, common::faults::scaled(bound));
    eprintln!("{name}: the faulting process passed in {:?}", start.elapsed());
    let rt = gpu_with(|_| {});
    common::axpy_matches_reference(&rt, 500, 256);
    common::exactly_once_many_producers(&rt, 2, 250, 50);
    rt.shutdown().unwrap();
    eprintln!("{name}: a new runtime in a new process ran 1000 tasks");
}

/// The faulting half: a fault with work in flight, then a new runtime in the same
/// process, refused.
fn fault(f: Fault) {
    common::faults::device_fault_recovers(|| Runtime::with_config(config(|_| {})), f, BOUND, Afterwards::Refused);
}

gpu_test!(fault_trap, {
    in_child("fault_trap", BOUND * 3, || fault(Fault::Trap));
});

gpu_test!(fault_illegal_address_low, {
    in_child("fault_illegal_address_low", BOUND * 3, || fault(Fault::IllegalAddress(8)));
});

gpu_test!(fault_illegal_address_high, {
    in_child("fault_illegal_address_high", BOUND * 3, || fault(Fault::IllegalAddress(0x7ff0_dead_0000)));
});

// Faults back to back, each in a process of its own, alternating trap and illegal
// address; the device serves a new runtime after each. Prints how many were survived.
gpu_test!(fault_repeatedly, {
    let mut survived = 0;
    for round in 0..4 {
        if round % 2 == 0 {
            in_child("fault_trap", BOUND * 3, || fault(Fault::Trap));
        } else {
            in_child("fault_illegal_address_low", BOUND * 3, || fault(Fault::IllegalAddress(8)));
        }
        survived += 1;
    }
    eprintln!("faults injected and survived (each in its own process): {survived}");
});

// Producers submitting (lone tasks, batches, pipelined batches) while the device
// traps: every refusal names the fault, never `ShutDown`.
gpu_test!(producers_during_a_fault, {
    in_child("producers_during_a_fault", BOUND * 3, || {
        common::faults::producers_during_a_fault_get_the_fault(gpu_with(|_| {}), Fault::Trap, 6)
    });
});

gpu_test!(fault_hang_watchdog_fires, {
    let d = Duration::from_secs(1);
    common::faults::watchdog_ends_hung_task(|| gpu_with(|c| c.task_deadline = Some(d)), d);
});

// After a fault (in its child process), the device still runs the ordinary suite's
// heaviest scenario.
gpu_test!(fault_then_full_workload, {
    in_child("fault_trap", BOUND * 3, || fault(Fault::Trap));
    common::exactly_once_many_producers(&gpu_with(|c| c.capacity = 1 << 16), 8, 125_000, 5_000);
});
