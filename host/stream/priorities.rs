//! Stream priorities and the ids that tell streams apart.

use std::sync::atomic::{AtomicU64, Ordering};

/// The stream priorities of a device. CUDA counts backwards: `greatest` is the
/// numerically lowest value and the most urgent; `least` (0 on current GPUs) is the
/// default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priorities {
    /// The least urgent priority (the default).
    pub least: i32,
    /// The most urgent priority (numerically the lowest).
    pub greatest: i32,
}

impl Priorities {
    /// The most urgent priority.
    pub fn high(&self) -> i32 {
        self.greatest
    }
    /// The default, least urgent priority.
    pub fn low(&self) -> i32 {
        self.least
    }
    /// `p` moved into the range, as the driver does.
    pub fn clamp(&self, p: i32) -> i32 {
        p.clamp(self.greatest, self.least)
    }
}

/// Identifies a stream for the access tracker (a handle's address may be reused).
pub(crate) fn next_stream_id() -> u64 {
    // Relaxed: a unique number, ordered with nothing.
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
