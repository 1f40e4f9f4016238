//! What the runtime writes into a task's header as it enters the ring: its completion
//! segment (`resident_shared::segment`) and the runtime's flags. User tasks arrive with
//! these words zero (validation checks it); the device trusts them.

use resident_shared::{Task, segment};

/// The placement of a run of tasks inside their batch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placement {
    /// Index in the batch of the run's first task.
    pub index: u32,
    /// Tasks in the whole batch.
    pub batch_len: u32,
    /// `task_flags` bits for every task of the batch.
    pub flags: u16,
    /// The runtime's segment size (`segment::segment_size`).
    pub size: u32,
}

impl Placement {
    /// A whole batch of `len` tasks.
    pub fn batch(len: u32, flags: u16, size: u32) -> Self {
        Self { index: 0, batch_len: len, flags, size }
    }

    /// The same batch, from its task `offset` on.
    pub fn at(self, offset: u32) -> Self {
        Self { index: self.index + offset, ..self }
    }

    /// Task `i` of the run, as it goes into the ring.
    #[inline(always)]
    pub fn apply(&self, i: usize, t: &Task) -> Task {
        Task { flags: self.flags, seg: segment::encode(self.index + i as u32, self.batch_len, self.size), ..*t }
    }
}
