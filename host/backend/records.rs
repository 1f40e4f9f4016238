//! The completion records' memory, as a new ring needs it.

use resident_shared::{Completion, SegmentDone, spent_stamp};

/// Marks every record of a new ring as read (`spent_stamp`): zeroed memory would hold
/// the stamp of task `u32::MAX` at the last index.
///
/// # Safety
/// `completions` and `segments` must hold `capacity` records each, written by nobody
/// else meanwhile.
pub(crate) unsafe fn spend_records(completions: *mut Completion, segments: *mut SegmentDone, capacity: u32) {
    for i in 0..capacity {
        unsafe {
            (*completions.add(i as usize)).stamp = spent_stamp(i);
            (*segments.add(i as usize)).stamp = spent_stamp(i);
        }
    }
}
