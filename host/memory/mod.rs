//! Memory the runtime hands out and names to tasks: buffers and counters (the user's
//! handles), the registries that tasks are checked against, what drops leave behind
//! until no task can touch it, and the live-allocation accounting.

pub(crate) mod buffer;
pub(crate) mod counter;
pub(crate) mod owner;
pub(crate) mod reclaim;
pub(crate) mod registry;
