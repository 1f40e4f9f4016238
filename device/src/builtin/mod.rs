//! The built-in tasks, as [`DeviceTask`](crate::DeviceTask) implementations over their argument layouts
//! (`resident_shared::builtin`), and [`Builtins`], the set that holds them: what a
//! runtime runs unless it loads a kernel image of its own, and what a user's set may
//! include. Every task checks its own arguments on the device: a bad task completes
//! with an error status and touches nothing.

pub(crate) mod axpy;
mod fault;
mod forward;
mod mark;
mod noop;
mod spin;
pub(crate) mod terminate;
mod tree;

pub use resident_shared::builtin::{
    Axpy, AxpyRaw, FaultIllegalAddress, FaultTrap, Forward, MAX_FORWARD, MAX_TREE_FANOUT, Mark, Noop, Spin, Tree, ids,
};

crate::task_set! {
    /// The built-in tasks: noop, axpy, spin, mark, tree, forward, and the fault-injection and
    /// raw-address tasks that only `Batch::submit_unchecked` accepts.
    pub struct Builtins { Noop, Axpy, Spin, Mark, Tree, Forward, FaultTrap, FaultIllegalAddress, AxpyRaw }
}
