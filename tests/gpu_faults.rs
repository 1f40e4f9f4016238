//! Fault injection on a GPU: a task that traps, one that stores through a forged
//! address (low and high), a hung task ended by the watchdog. Each must resolve every
//! outstanding ticket within a bound, and a new runtime must then work in the same
//! process (the primary context is reset after a sticky error: host/cuda/driver.rs).
//! A process of its own, so that a failed recovery cannot take the rest of the GPU
//! suite down; not run under compute-sanitizer, which reports the injected faults as
//! the errors they are. On a GPU:
//!
//!     <gpu_faults test binary> --include-ignored --test-threads=1
//!
//! Without a GPU these tests fail: `RuntimeConfig::cuda()` refuses to start.

mod common;
#[macro_use]
mod gpu_turns;

use common::faults::Fault;
use resident::{Runtime, RuntimeConfig};
use std::time::Duration;

fn gpu_with(f: impl FnOnce(&mut RuntimeConfig)) -> Runtime {
    let mut c = RuntimeConfig { capacity: 1 << 12, shutdown_timeout: Duration::from_secs(2), ..RuntimeConfig::cuda() };
    f(&mut c);
    let rt = Runtime::with_config(c).expect("a CUDA GPU");
    eprintln!("{}", rt.backend());
    rt
}

const BOUND: Duration = Duration::from_secs(20);

gpu_test!(fault_trap_resolves_every_ticket_and_a_new_runtime_works, {
    common::faults::device_fault_recovers(|| gpu_with(|_| {}), Fault::Trap, BOUND);
});

gpu_test!(fault_illegal_address_low_resolves_every_ticket_and_a_new_runtime_works, {
    common::faults::device_fault_recovers(|| gpu_with(|_| {}), Fault::IllegalAddress(8), BOUND);
});

gpu_test!(fault_illegal_address_high_resolves_every_ticket_and_a_new_runtime_works, {
    common::faults::device_fault_recovers(|| gpu_with(|_| {}), Fault::IllegalAddress(0x7ff0_dead_0000), BOUND);
});

// Faults back to back: the reset path is repeatable. Prints how many were survived.
gpu_test!(fault_repeatedly_in_one_process, {
    let mut survived = 0;
    for round in 0..5 {
        let fault = if round % 2 == 0 { Fault::Trap } else { Fault::IllegalAddress(8) };
        common::faults::device_fault_recovers(|| gpu_with(|_| {}), fault, BOUND);
        survived += 1;
    }
    eprintln!("faults injected and survived in one process: {survived}");
});

gpu_test!(fault_hang_watchdog_fires, {
    let d = Duration::from_secs(1);
    common::faults::watchdog_ends_hung_task(|| gpu_with(|c| c.task_deadline = Some(d)), d);
});

// After all the faults above (in any order), the device still runs the ordinary suite's
// heaviest scenario.
gpu_test!(fault_then_full_workload, {
    common::faults::device_fault_recovers(|| gpu_with(|_| {}), Fault::Trap, BOUND);
    common::exactly_once_many_producers(&gpu_with(|c| c.capacity = 1 << 16), 8, 125_000, 5_000);
});
