//! `tree`: one node of a tree of tasks grown on the device; marks its node, then pushes
//! its children. Tests and benchmarks device-side follow-up tasks: every node must be
//! marked exactly once, and the host's ticket must wait for the whole tree.

use resident_shared::{Status, Task};

use super::TaskContext;
use crate::{arch, buffers};

/// Most children per node.
pub const MAX_FANOUT: u32 = 16;

/// # Safety
/// See [`super::execute`].
#[inline(never)]
pub unsafe fn run(task: &Task, cx: &TaskContext) -> Result<u64, Status> {
    let slice = task.arg_slice(0);
    let (node, depth, fanout) = (task.args[3], task.args[4], task.args[5]);
    let marks = unsafe { buffers::resolve::<u32>(cx.buffers, slice) }?;
    if node >= slice.len {
        return Err(Status::OutOfRange);
    }
    if depth > 0 && (fanout == 0 || fanout > MAX_FANOUT) {
        return Err(Status::BadArgs);
    }
    if arch::lane_id() == 0 {
        // Relaxed, .gpu: a counter, published by the completion's release.
        unsafe { arch::atom_add_relaxed_gpu(marks.add(node as usize), 1) };
    }
    if depth == 0 {
        return Ok(0);
    }
    for k in 1..=fanout {
        let child = node as u64 * fanout as u64 + k as u64;
        if child >= slice.len as u64 {
            return Err(Status::OutOfRange);
        }
        unsafe { cx.spawn(&Task::tree(slice, child as u32, depth - 1, fanout)) }?;
    }
    Ok(fanout as u64)
}
