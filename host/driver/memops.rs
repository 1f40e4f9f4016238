//! Stream memory operations: how the copy path (`RuntimeConfig::relay_publish` off: a
//! batch too large for the relay's inline path, or every batch without a relay)
//! publishes `tail` without the copy engine.
//!
//! The copy path paid two copies in series for one task: its slot, then a 4-byte copy
//! into `tail`. A stream write (`cuStreamWriteValue32`) is executed by the stream's
//! front end itself, with no DMA: `tail` by a write instead of the second copy took the
//! one-task round trip from 10.2-12.2 to 9.2-10.0 µs (H100, 2026-11-26). Writing the records too (eight 8-byte writes a record and
//! `tail` in one `cuStreamBatchMemOp`, no copy at all) was slower, 12.5-13.9 µs: every
//! write carries a fence, and the flag that drops it is refused here.
//!
//! Ordering (docs/protocol.md, step 5): the write carries the default flag, under which
//! the driver puts a memory fence before it (the semantics of `__threadfence_system`,
//! scoped to the stream), and stream order starts it after the slot copies before it
//! have completed, so the slots' bytes are in device memory before `tail` changes. It
//! pairs with the workers' `ld.acquire.sys` of `tail` (device/src/queue.rs, step 2):
//! system scope, because the writer is not a thread of this GPU, as with a copy.
//!
//! They are optional: a driver may refuse them (this runtime's first build saw
//! `CUDA_ERROR_INVALID_VALUE` on its header, 2026-11-22, and the same H100's driver
//! refuses `CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER` today: tools/gpu/probe/memops.c).
//! `probe` asks once, at start; where they are refused, `tail` goes by a copy.

use cudarc::driver::sys::{self, CUstreamWriteValue_flags};

use crate::Result;
use crate::driver::context::check;

/// Whether the driver takes stream writes on this device: one write of `value` to
/// `addr`, enqueued on `stream` (the caller waits for it).
///
/// # Safety
/// `addr` is a live 4-byte device word of the current context that holds `value` and
/// that nothing else writes until this write is done (the caller synchronizes `stream`
/// before anything may), so the write changes nothing.
pub unsafe fn probe(stream: sys::CUstream, addr: u64, value: u32) -> bool {
    let flags = CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_DEFAULT as u32;
    // SAFETY: the caller's contract; a refusal is returned here, synchronously.
    let r = unsafe { sys::cuStreamWriteValue32_v2(stream, addr, value, flags) };
    r == sys::CUresult::CUDA_SUCCESS
}

/// Enqueues the write of `end` into `tail` (device address `tail`) on `stream`, after a
/// fence that orders every earlier copy and write of the stream before it.
pub fn write_tail(stream: sys::CUstream, tail: u64, end: u32) -> Result<()> {
    let flags = CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_DEFAULT as u32;
    // SAFETY: `tail` is the caller's live header word; the write has no host-side
    // source to keep alive.
    check(unsafe { sys::cuStreamWriteValue32_v2(stream, tail, end, flags) }, "cuStreamWriteValue32(tail)")
}
