//! What a buffer or counter needs of the runtime that made it, and no more: the memory
//! layer's own view of the runtime. `runtime::Shared` implements it, so memory/ names no
//! layer above it (tools/layers.py).

use std::time::Instant;

use crate::Result;
use crate::backend::Backend;
use crate::error::Error;
use crate::memory::reclaim::Held;
use crate::memory::registry::Registries;
use crate::util::read_mostly::ReadMostly;

/// The runtime as its buffers and counters see it.
pub(crate) trait Owner: Send + Sync {
    /// The backend their memory and table entries live in.
    fn backend(&self) -> &Backend;
    /// The registries tasks are checked against: handles are registered and retired
    /// under their write lock, which producers hold for reading between a batch's check
    /// and its reservation.
    fn registries(&self) -> &ReadMostly<Registries>;
    /// `Ok` while the runtime takes work; its fault or `ShutDown` after.
    fn usable(&self) -> Result<()>;
    /// Releases what earlier drops left, if no task can use it any more. Never waits.
    fn reclaim(&self);
    /// Holds `held` until every task before `target` has completed.
    fn defer(&self, target: u64, held: Held);
    /// A failed driver call's error, or the runtime's fault behind it.
    fn explain(&self, e: Error) -> Error;
    /// The end of everything published so far.
    fn published(&self) -> u64;
    /// The next sequence number a reservation takes (read under the registries' write
    /// lock: it covers every task that may name a handle retired under it).
    fn next_seq(&self) -> u64;
    /// Waits until every task from `from` on that was submitted before the call has
    /// completed (or `deadline`).
    fn settle(&self, from: u64, deadline: Option<Instant>) -> Result<()>;
}
