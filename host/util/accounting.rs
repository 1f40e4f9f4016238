//! Live-allocation accounting: how many bytes of device, pinned and host memory the
//! runtime's allocators hold right now, process-wide. Leak tests compare it before a
//! runtime is created and after it is dropped (docs/reliability.md); a deliberate leak
//! (workers that would not stop) stays counted, as it should.

use std::sync::atomic::{AtomicI64, Ordering};

static DEVICE: AtomicI64 = AtomicI64::new(0);
static PINNED: AtomicI64 = AtomicI64::new(0);
static HOST: AtomicI64 = AtomicI64::new(0);

/// Bytes held by the runtime's allocations, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveAllocations {
    /// Device memory (`cuMemAlloc`, `cuMemAllocAsync`) for queues and buffers.
    pub device_bytes: i64,
    /// Page-locked host memory (`cuMemHostAlloc`): staging, completions, mailboxes.
    pub pinned_bytes: i64,
    /// The CPU backend's stand-in for device memory.
    pub host_bytes: i64,
}

/// What the runtime's allocators hold now, in this process.
pub fn live_allocations() -> LiveAllocations {
    // Relaxed: statistics, read after the joins and drops a test orders itself.
    LiveAllocations {
        device_bytes: DEVICE.load(Ordering::Relaxed),
        pinned_bytes: PINNED.load(Ordering::Relaxed),
        host_bytes: HOST.load(Ordering::Relaxed),
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Device,
    Pinned,
    Host,
}

/// Counts `bytes` in (`allocated`) or out (freed).
pub(crate) fn count(kind: Kind, bytes: usize, allocated: bool) {
    let c = match kind {
        Kind::Device => &DEVICE,
        Kind::Pinned => &PINNED,
        Kind::Host => &HOST,
    };
    let b = bytes as i64;
    c.fetch_add(if allocated { b } else { -b }, Ordering::Relaxed);
}
