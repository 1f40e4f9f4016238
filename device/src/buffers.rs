//! The device-side check of a buffer slice against the buffer table, done before a task
//! touches memory ([`crate::TaskCx::view`]). The host already checked it at submit time;
//! this second check is what stops a forged or stale task from reaching memory it does
//! not own.

use resident_shared::{BufSlice, BufferEntry, ElemType, Element, Status};

use crate::arch;

/// The table entry `slice` names, read with one weak 16-byte load. The table has an
/// entry for every 16-bit index ([`resident_shared::MAX_BUFFERS`]), so no index is out
/// of it. A task that resolves several slices reads all their entries first, so that
/// the loads are in flight together.
///
/// Ordering: the host writes an entry before it publishes any task that names it, and
/// this load comes after the acquire that handed the worker its task (of `tail`,
/// `crate::queue` step 2; of a child's spawn slot; of the relay's mailbox), as the
/// task's own weak loads do: so it sees the entry (an acquire also drops the SM's stale
/// L1 lines, and a weak load may hit in L1, where a strong one would go to L2 every
/// time).
///
/// # Safety
/// `table` must point to `MAX_BUFFERS` readable entries. Entries may be rewritten by the
/// host only while no published task names them (the runtime frees a buffer only after
/// every task submitted before the free has completed).
#[inline(always)]
pub unsafe fn entry(table: *const BufferEntry, slice: BufSlice) -> BufferEntry {
    let (a, b) = unsafe { arch::ld_weak_v2_u64(table.add(slice.handle.index()) as *const u64) };
    bytemuck::cast([a, b])
}

/// Whether `entry`, read for `slice`, holds a live buffer of `T` and the slice lies
/// within it; the slice's first element if so.
#[inline(always)]
pub fn check<T: Element>(entry: BufferEntry, slice: BufSlice) -> Result<*mut T, Status> {
    if !entry.names(slice, ElemType::of::<T>()) {
        return Err(Status::BadBuffer);
    }
    if !entry.contains(slice) {
        return Err(Status::OutOfRange);
    }
    Ok((entry.ptr as *mut T).wrapping_add(slice.offset as usize))
}
