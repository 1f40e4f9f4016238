//! What a runtime has done so far, read in one call ([`crate::Runtime::metrics`]). The
//! device's free memory is the device's to say: `Runtime::device()?.memory_info()`.

use crate::runtime::policy::ResidencyStats;

/// A runtime's counters at one moment ([`crate::Runtime::metrics`]). Each is read on its
/// own (no lock holds them together): `completed` never exceeds `submitted` read after
/// it, but may lag it by the tasks in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuntimeMetrics {
    /// Queue slots taken so far: tasks submitted, listed, or reserved to be written in
    /// place (a sequence number: the next slot's). A slot holds one task, except in a
    /// resident list chunked by [`crate::RuntimeConfig::list_slot_tasks`], where it
    /// stands for up to 32 of the list's tasks.
    pub submitted: u64,
    /// Queue slots completed so far, in order (every slot before this sequence number).
    pub completed: u64,
    /// Tasks staged in the 32-byte compact form (`RuntimeConfig::compact_records`):
    /// runs of large batches over the host ring whose every task has it. Always 0 on the
    /// CPU backend and on the copy path.
    pub compact_tasks: u64,
    /// Elastic residency: whether the kernel runs now, its exits and relaunches, the
    /// time slices other contexts took.
    pub residency: ResidencyStats,
}

impl RuntimeMetrics {
    /// Queue slots taken and not completed yet (those of open reservations, and tasks
    /// waiting on counters, among them).
    pub fn in_flight(&self) -> u64 {
        self.submitted.saturating_sub(self.completed)
    }
}
