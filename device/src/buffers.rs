//! The device-side check of a buffer slice against the buffer table, done before a task
//! touches memory. The host already checked it at submit time; this second check is
//! what stops a forged or stale task from reaching memory it does not own.

use resident_shared::{BufSlice, BufferEntry, ElemType, MAX_BUFFERS, Status};

/// Element types tasks read and write, with their table codes.
pub trait DeviceElem {
    const TYPE: ElemType;
}
impl DeviceElem for f32 {
    const TYPE: ElemType = ElemType::F32;
}
impl DeviceElem for u32 {
    const TYPE: ElemType = ElemType::U32;
}

/// Resolves `slice` to a pointer to its first element, if the table holds a live buffer
/// of `T` there and the slice lies within it.
///
/// # Safety
/// `table` must point to `MAX_BUFFERS` readable entries. Entries may be rewritten by the
/// host only while no published task names them (the runtime frees a buffer only after
/// every task submitted before the free has completed).
#[inline(always)]
pub unsafe fn resolve<T: DeviceElem>(table: *const BufferEntry, slice: BufSlice) -> Result<*mut T, Status> {
    let index = slice.handle.index();
    if index >= MAX_BUFFERS {
        return Err(Status::BadBuffer);
    }
    // Volatile: the table is written by the host between tasks; never let the compiler
    // carry an entry over from an earlier task.
    let entry = unsafe { core::ptr::read_volatile(table.add(index)) };
    if !entry.names(slice, T::TYPE) {
        return Err(Status::BadBuffer);
    }
    if !entry.contains(slice) {
        return Err(Status::OutOfRange);
    }
    Ok(unsafe { (entry.ptr as *mut T).add(slice.offset as usize) })
}
