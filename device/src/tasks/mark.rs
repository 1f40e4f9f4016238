//! `mark`: atomically increments one `u32` counter; the exactly-once witness in tests.

use resident_shared::{Status, Task};

use super::TaskContext;
use crate::{arch, buffers};

/// # Safety
/// See [`super::execute`].
#[inline(always)]
pub unsafe fn run(task: &Task, cx: &TaskContext) -> Result<u64, Status> {
    let slice = task.arg_slice(0);
    let index = task.args[3];
    let counters = unsafe { buffers::resolve::<u32>(cx.buffers, slice) }?;
    if index >= slice.len {
        return Err(Status::OutOfRange);
    }
    let mut old = 0;
    if arch::lane_id() == 0 {
        // Relaxed, .gpu: a counter; kernel exit or the completion's release orders it
        // before the host reads the buffer.
        old = unsafe { arch::atom_add_relaxed_gpu(counters.add(index as usize), 1) };
    }
    Ok(arch::shfl_idx(old, 0) as u64)
}
