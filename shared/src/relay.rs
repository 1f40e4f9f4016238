//! The relay's mailbox, in mapped pinned host memory: how small host batches reach the
//! running kernel without a driver call. The protocol is in `device/src/relay.rs`
//! (device side) and `host/cuda/relay.rs` (host side).

use bytemuck::{Pod, Zeroable};


/// The mailbox: what the host writes on one line, what the relay writes on another.
/// Sequence numbers here are 64-bit (the ring's 32-bit counters wrap; these never do),
/// so the relay can tell where to start after any number of copy publications.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C, align(128))]
pub struct RelayMailbox {
    /// End of the tasks staged for the relay. The host stores it with release after
    /// writing the staged slots (and, at a hand-over, `host_from`).
    pub host_tail: u64,
    /// First task the relay must copy after the last hand-over from copy publications
    /// (everything before it came by copy). Written before `host_tail`.
    pub host_from: u64,
    pub _pad0: [u64; 14],
    /// End of what the relay has published into the device ring; the host reads it
    /// before it publishes by copy, so the two publishers never overlap.
    pub relayed: u64,
    pub _pad1: [u64; 15],
}
const _: () = assert!(core::mem::size_of::<RelayMailbox>() == 256);
const _: () = assert!(core::mem::offset_of!(RelayMailbox, relayed) == 128);
