//! Resident task lists read in place: the table of list runs. A run is a stretch of
//! queue sequence numbers `[first, first + len)` whose tasks the workers read from a
//! resident list in device memory (`addr`, the run's first task) instead of the ring,
//! so that submitting a list copies no task at all. The host writes a run's entry
//! before it publishes `tail` over the run; the protocol is in `device/src/lists.rs`.

use bytemuck::{Pod, Zeroable};

/// Entries in the table; run `r` (counted from 0 by the host) uses entry `r % LIST_RUNS`.
/// Two per lane of a warp: a worker scans the table with two loads per lane, in flight
/// together (only when the run it cached does not hold its slot). 64, not 32: four
/// producers with eight batches of 256 in flight each (the streaming bench) hold up
/// to 36 runs, and with 32 entries each waited for an entry as for room (0.89 µs a
/// batch against 0.09 for one producer; measured with the `phase-timing` build, H100,
/// 2026-11-26).
pub const LIST_RUNS: usize = 64;

/// Set in a run's `addr` when its tasks lie in host memory (the host ring, mapped
/// pinned memory): a worker then reads each task whole, with one round trip over PCIe,
/// into a copy of its own, instead of field by field in place (device/src/worker.rs).
/// Device addresses never have it set.
pub const IN_HOST: u64 = 1 << 63;

/// Set in a run's `addr`, beside [`IN_HOST`], when its tasks are [`crate::CompactTask`]s
/// (32 bytes each, from `addr` on): a worker reads each whole and widens it into a
/// [`crate::Task`] of its own. Only runs over the host ring have it; device addresses
/// never have it set.
pub const COMPACT: u64 = 1 << 62;

/// The address bits of a run's `addr`, without [`IN_HOST`] and [`COMPACT`].
pub const ADDR_MASK: u64 = !(IN_HOST | COMPACT);

/// One run. `span` packs `first` (low half) and `len` (high half) into one 8-byte word,
/// read with one load: a reader sees either an entry's old pair or its new one, never
/// half of each (device/src/lists.rs says why that is enough).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct ListRun {
    /// The run's `first` and `len`, packed by [`pack`]: written by the host, read by the
    /// workers.
    pub span: u64,
    /// Device address of the run's first task, with [`IN_HOST`] set if it lies in host
    /// memory, and [`COMPACT`] if its tasks are 32-byte `CompactTask`s.
    pub addr: u64,
}
const _: () = assert!(core::mem::size_of::<ListRun>() == 16);

impl ListRun {
    /// The run of sequence numbers `[first, first + len)`, read from the list at `addr`.
    pub const fn new(first: u32, len: u32, addr: u64) -> Self {
        Self { span: pack(first, len), addr }
    }
}

/// The `span` word of a run.
#[inline(always)]
pub const fn pack(first: u32, len: u32) -> u64 {
    first as u64 | (len as u64) << 32
}

/// Whether the run whose `span` word this is holds sequence number `seq`.
#[inline(always)]
pub const fn holds(span: u64, seq: u32) -> bool {
    seq.wrapping_sub(span as u32) < (span >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_its_span_only() {
        let s = pack(100, 10);
        assert!(holds(s, 100) && holds(s, 109));
        assert!(!holds(s, 99) && !holds(s, 110));
        // Across the wrap of sequence numbers.
        let w = pack(u32::MAX - 1, 4);
        assert!(holds(w, u32::MAX) && holds(w, 1) && !holds(w, 2));
        // The zeroed entry holds nothing.
        assert!(!holds(0, 0));
    }
}
