//! Task types whose declarations lie, for the tests of how the runtime holds a task to
//! what it declared: the host checks a task's declaration (`DeviceTask::declare`), and
//! the device must refuse whatever the task's `run` reaches beyond it. Not an example
//! of how to write tasks.
//!
//! - [`Lie`]: declares up to two slices (each read, atomic or write, or not at all),
//!   perhaps a counter and its own type as a child, and then does one thing ([`op`])
//!   to a slice of its choosing, declared or not;
//! - [`Impostor`]: a type that is in no set, with the same id as [`Lie`]: a runtime
//!   whose set holds `Lie` must refuse it, not run its bytes as a `Lie`;
//! - [`Verbose`]: a declaration of as many items as its arguments say.
#![no_std]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

use bytemuck::{Pod, Zeroable};
use resident_device::shared::{CounterId, Slice};
use resident_device::{ArgError, Builtins, Declare, DeviceTask, Status, TaskCx, TaskId};

/// What a [`Lie`] does to its `act` slice.
pub mod op {
    /// Reads every element; result: their wrapping sum.
    pub const READ: u32 = 0;
    /// Writes [`crate::MARK`] to every element (`View::write`).
    pub const WRITE: u32 = 1;
    /// Adds one to every element (`View::atomic_add`).
    pub const ATOMIC: u32 = 2;
    /// Writes [`crate::MARK`] to every element through `View::as_mut_ptr`.
    pub const RAW_WRITE: u32 = 3;
    /// Pushes one child `Lie` that declares `act` for writing and writes it.
    pub const SPAWN: u32 = 4;
    /// Signals its `counter` (`TaskCx::signal`).
    pub const SIGNAL: u32 = 5;
    /// Panics in `run`: a device fault (a trap on a GPU, through the image's panic
    /// handler; the worker thread's panic on the CPU), reached through the checked API.
    pub const PANIC: u32 = 6;
    /// Pushes an [`crate::Impostor`] over `act`: a type outside the set with `Lie`'s id,
    /// whose own declaration lies within this task's (the device must not run it as a
    /// `Lie`).
    pub const SPAWN_IMPOSTOR: u32 = 7;
}

/// How a [`Lie`] declares: two bits per declared slice (`modes >> 2 i`), and flags.
pub mod mode {
    /// Slice not declared.
    pub const NONE: u32 = 0;
    /// Declared `read`.
    pub const READ: u32 = 1;
    /// Declared `atomic`.
    pub const ATOMIC: u32 = 2;
    /// Declared `write`.
    pub const WRITE: u32 = 3;
    /// Declares that it pushes `Lie` children.
    pub const SPAWNS: u32 = 1 << 4;
    /// Declares its `counter`.
    pub const COUNTER: u32 = 1 << 5;
}

/// The value a write of a [`Lie`] stores.
pub const MARK: u32 = 0x5eed_f00d;

/// Declares `decl` (as `modes` says), then does `op` to `act`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Lie {
    /// The slices it declares (where `modes` says so).
    pub decl: [Slice<u32>; 2],
    /// [`mode`] bits.
    pub modes: u32,
    /// The slice it acts on: declared or not.
    pub act: Slice<u32>,
    /// What it does ([`op`]).
    pub op: u32,
    /// The counter it may signal.
    pub counter: CounterId,
}

impl Lie {
    /// A `Lie` that declares `decl` in `mode` and does `op` to `act`.
    pub fn new(decl: Slice<u32>, mode: u32, act: Slice<u32>, op: u32) -> Self {
        Self { decl: [decl, Slice::new(decl.handle, 0, 0)], modes: mode, act, op, counter: CounterId::NONE }
    }
}

impl DeviceTask for Lie {
    const ID: TaskId = TaskId(0x100);

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        for i in 0..2 {
            match (self.modes >> (2 * i)) & 3 {
                mode::READ => d.read(self.decl[i]),
                mode::ATOMIC => d.atomic(self.decl[i]),
                mode::WRITE => d.write(self.decl[i]),
                _ => {}
            }
        }
        if self.modes & mode::SPAWNS != 0 {
            d.spawns(Self::ID);
        }
        if self.modes & mode::COUNTER != 0 {
            d.counter(self.counter);
        }
        Ok(())
    }

    #[inline(never)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        match self.op {
            op::READ => {
                let v = cx.view(self.act)?;
                let mut sum = 0u32;
                for i in cx.lane_range(v.len()) {
                    sum = sum.wrapping_add(v.read(i)?);
                }
                Ok(cx.warp_sum_u32(sum) as u64)
            }
            op::WRITE => {
                let v = cx.view(self.act)?;
                for i in cx.lane_range(v.len()) {
                    v.write(i, MARK)?;
                }
                Ok(0)
            }
            op::ATOMIC => {
                let v = cx.view(self.act)?;
                for i in cx.lane_range(v.len()) {
                    v.atomic_add(i, 1)?;
                }
                Ok(0)
            }
            op::RAW_WRITE => {
                let v = cx.view(self.act)?;
                let p = v.as_mut_ptr()?;
                for i in cx.lane_range(v.len()) {
                    // SAFETY: `i < len` of a view the device checked and granted for
                    // writing; the lanes write distinct elements.
                    unsafe { p.add(i as usize).write_volatile(MARK) };
                }
                Ok(0)
            }
            op::SPAWN => {
                let child = Lie::new(self.act, mode::WRITE, self.act, op::WRITE);
                cx.spawn(&child)?;
                Ok(0)
            }
            op::SIGNAL => {
                cx.signal(self.counter)?;
                Ok(0)
            }
            op::PANIC => panic!("a Lie that panics in run"),
            op::SPAWN_IMPOSTOR => {
                cx.spawn(&Impostor { x: self.act })?;
                Ok(0)
            }
            _ => Err(Status::BadArgs),
        }
    }
}

/// A task type in no set, with [`Lie`]'s id: writes [`MARK`] over `x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Impostor {
    /// Written.
    pub x: Slice<u32>,
}

impl DeviceTask for Impostor {
    const ID: TaskId = Lie::ID;

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.write(self.x);
        Ok(())
    }

    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let v = cx.view(self.x)?;
        for i in cx.lane_range(v.len()) {
            v.write(i, MARK)?;
        }
        Ok(0)
    }
}

/// Declares `x` for reading `n` times over (a declaration of `n` items), then reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Verbose {
    /// Read.
    pub x: Slice<u32>,
    /// How many times `x` is declared.
    pub n: u32,
}

impl DeviceTask for Verbose {
    const ID: TaskId = TaskId(0x101);

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        for _ in 0..self.n.min(64) {
            d.read(self.x);
        }
        Ok(())
    }

    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let v = cx.view(self.x)?;
        let mut sum = 0u32;
        for i in cx.lane_range(v.len()) {
            sum = sum.wrapping_add(v.read(i)?);
        }
        Ok(cx.warp_sum_u32(sum) as u64)
    }
}

resident_device::task_set! {
    /// The lying tasks and the built-in ones (not [`Impostor`]).
    pub struct Liars: Builtins { Lie, Verbose }
}
