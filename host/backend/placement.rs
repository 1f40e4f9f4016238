//! What the runtime writes into a task's header as it enters the ring: its completion
//! segment (`resident_shared::segment`) and the runtime's flags. User tasks arrive with
//! these words zero (validation checks it); the device trusts them.

use resident_shared::Task;

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
        Task { flags: self.flags, seg: self.seg(self.index + i as u32), ..*t }
    }

    /// The `seg` word of the batch's task `index`: `segment::encode`, with the segment
    /// size a power of two (the runtime's always is), so no division.
    #[inline(always)]
    fn seg(&self, index: u32) -> u32 {
        debug_assert!(self.size.is_power_of_two());
        let off = index & (self.size - 1);
        let start = index - off;
        let seg_len = (self.batch_len - start).min(self.size);
        off | seg_len << 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use resident_shared::segment;

    #[test]
    fn seg_is_encode() {
        for size in [32u32, 64, 1024] {
            for len in [1u32, 31, 32, 33, 1000, 1024, 1025, 5000] {
                let p = Placement::batch(len, 0, size);
                for i in 0..len {
                    assert_eq!(p.seg(i), segment::encode(i, len, size), "size {size} len {len} index {i}");
                }
            }
        }
    }
}
