//! The relay's mailbox, in mapped pinned host memory: how small host batches reach the
//! running kernel without a driver call. The protocol is in `device/src/relay.rs`
//! (device side) and `host/cuda/relay.rs` (host side).

use bytemuck::{Pod, Zeroable};

use crate::CachePadded;

/// Two words on their own lines: one written by the host, one by the relay warp.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
pub struct RelayMailbox {
    /// End of the tasks staged for the relay (a sequence number, wrapping at 2^32).
    /// The host stores it with release after writing the staged slots.
    pub host_tail: CachePadded,
    /// End of what the relay has published into the device ring; the host reads it
    /// before it publishes by copy, so the two publishers never overlap.
    pub relayed: CachePadded,
}
const _: () = assert!(core::mem::size_of::<RelayMailbox>() == 256);
