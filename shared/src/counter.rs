//! Device counters: the events of the device-side dependency graph. A task may wait
//! until a counter reaches a value ([`crate::Task::after`]) and may add one to a
//! counter once it has run ([`crate::Task::signals`]). Counters live in a table in
//! device memory owned by the runtime; the host hands out their ids.

use bytemuck::{Pod, Zeroable};

/// Entries in the counter table: every 16-bit id names one (id 0 means "none"), so
/// the device needs no bounds check on an id (the table is 256 KiB).
pub const MAX_COUNTERS: usize = 1 << 16;

/// The counter table's words: `MAX_COUNTERS` values, then one dropped flag per counter
/// ([`DROPPED`] words on: nonzero while the host is dropping that counter). A task
/// waiting on a counter whose flag is set ends at once with `Status::CounterDropped`
/// rather than wait for a signal that nothing will send (`resident_device::deps`).
pub const COUNTER_TABLE_WORDS: usize = 2 * MAX_COUNTERS;

/// Word offset of the dropped flags in the counter table.
pub const DROPPED: usize = MAX_COUNTERS;

/// A device counter as tasks name it: its index in the runtime's table
/// (1..MAX_COUNTERS; what the device uses) and its generation (what the host checks).
/// The host hands an index out again only with a new generation, never one it handed
/// out before in the process, so an id of a dropped counter, or of another runtime's,
/// never names a live counter. In a task's header the index sits in `wait_counter` or
/// `signal_counter` and the generation in the runtime's `seg` word until submission
/// ([`crate::Task::after`], [`crate::Task::signals`]).
///
/// `Pod`, so it can sit in a task's arguments (declare it: `Declare::counter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Pod, Zeroable)]
#[repr(C)]
pub struct CounterId {
    /// Its entry in the counter table (0: no counter).
    pub index: u16,
    /// The generation the host handed it out with (0: none).
    pub generation: u16,
}

impl CounterId {
    /// No counter.
    pub const NONE: Self = Self { index: 0, generation: 0 };

    /// The counter at `index`, handed out with `generation`.
    pub const fn new(index: u16, generation: u16) -> Self {
        Self { index, generation }
    }
}
