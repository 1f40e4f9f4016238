//! Constructors of the tasks that only `submit_unchecked` accepts
//! ([`crate::Opcode::unchecked_only`]): raw device addresses and fault injection. They
//! are `unsafe` to build as well as to submit, so that no safe line of user code names
//! them by accident; the host's checked submit refuses them by opcode, whoever built
//! them (`Task::raw` with the same opcode is refused too).

use crate::task::{Opcode, TASK_ARGS, Task};

impl Task {
    /// A task that makes the kernel trap: on a GPU the whole persistent kernel dies with
    /// a sticky error and every outstanding ticket fails with `Error::DeviceFault`; on
    /// the CPU backend the worker thread panics, with the same outcome.
    ///
    /// # Safety
    /// Submitting it ends the runtime (tickets resolve, a new runtime can be created;
    /// docs/reliability.md). Anything else on the GPU's primary context is lost too.
    pub const unsafe fn fault_trap() -> Self {
        Self::raw(Opcode::FaultTrap as u16, [0; TASK_ARGS])
    }

    /// A task that stores a `u32` through `addr` without any check. With a forged
    /// address (8, or an unmapped high address) the kernel dies with an illegal-address
    /// error; the CPU backend panics instead of storing (a real wild store would take
    /// the test process down).
    ///
    /// # Safety
    /// As for [`Task::fault_trap`]; with a valid address, it writes there unchecked.
    pub const unsafe fn fault_illegal_address(addr: u64) -> Self {
        let mut args = [0; TASK_ARGS];
        args[0] = addr as u32;
        args[1] = (addr >> 32) as u32;
        Self::raw(Opcode::FaultIllegalAddress as u16, args)
    }

    /// `y[i] = alpha * x[i] + y[i]` for `i < len`, through raw addresses (device
    /// addresses on a GPU, host addresses on the CPU backend), checked by nobody.
    ///
    /// # Safety
    /// `x` and `y` must be valid, 4-byte aligned, for `len` f32s each, in memory the
    /// device can reach, until the task has completed; nothing else may write `y`
    /// meanwhile.
    pub const unsafe fn axpy_raw(alpha: f32, x: u64, y: u64, len: u32) -> Self {
        let mut args = [0; TASK_ARGS];
        args[0] = alpha.to_bits();
        args[1] = x as u32;
        args[2] = (x >> 32) as u32;
        args[3] = y as u32;
        args[4] = (y >> 32) as u32;
        args[5] = len;
        Self::raw(Opcode::AxpyRaw as u16, args)
    }

    /// A task that never ends on its own: a spin for 2^64 - 1 ns, which leaves only when
    /// the runtime aborts (the watchdog, or a shutdown past its timeout). For tests of
    /// both.
    pub const fn hang() -> Self {
        Self::spin(u64::MAX)
    }
}
