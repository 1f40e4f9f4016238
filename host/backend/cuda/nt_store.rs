//! Streaming (non-temporal) stores of whole task records into the host ring.
//!
//! A batch's records are written once by the host and read once by the device over
//! PCIe. An ordinary store first reads the line it writes into the host's cache (a
//! read for ownership): twice the memory traffic for a line that is overwritten whole.
//! A streaming store writes the line to memory without reading it (x86-64's `movntdq`,
//! part of SSE2, which every x86-64 has).
//!
//! Streaming stores are weakly ordered: a later ordinary store (the release that
//! publishes the records, host/queue/publisher.rs) may become visible before them.
//! [`fence`] (`sfence`) orders them before every later store; whoever stages records
//! calls it before they are published.

use resident_shared::{CompactTask, Task};

/// Writes `v` (a task record: `Task` or `CompactTask`) at `dst` with streaming stores
/// where the target has them, 16 bytes at a time.
///
/// # Safety
/// `dst` is valid for a write of one `T` and aligned to 16 bytes.
#[inline(always)]
pub(crate) unsafe fn write_record<T: Record>(dst: *mut T, v: T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_stream_si128};
        let d = dst as *mut __m128i;
        let s = &v as *const T as *const __m128i;
        // SAFETY: a `Record` is a whole number of 16-byte words aligned to 16 (its
        // alignment, asserted in resident-shared), on both sides; `dst` is valid
        // (caller).
        for i in 0..size_of::<T>() / 16 {
            unsafe { _mm_stream_si128(d.add(i), _mm_load_si128(s.add(i))) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: `dst` is valid and aligned (caller).
    unsafe {
        dst.write(v)
    }
}

/// The records [`write_record`] writes: a whole number of 16-byte words, aligned to 16.
pub(crate) trait Record: Copy {}
impl Record for Task {}
impl Record for CompactTask {}
const _: () = assert!(size_of::<Task>().is_multiple_of(16) && align_of::<Task>() == 16);
const _: () = assert!(size_of::<CompactTask>().is_multiple_of(16) && align_of::<CompactTask>() == 16);

/// Orders every streaming store of this thread before its later stores.
#[inline(always)]
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no preconditions (SSE, part of x86-64).
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

#[cfg(test)]
mod timing {
    use super::*;
    use crate::backend::placement::Placement;
    use crate::util::timing::med;

    /// Staging 20,000 placed records into a 16 MB ring (the default capacity), round
    /// the ring from call to call, with ordinary and with streaming stores. An ignored
    /// test: `cargo test --release --lib nt_stage -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn nt_stage() {
        let tasks: Vec<Task> = (0..20_000u64).map(Task::noop).collect();
        let cap = 1usize << 18;
        let mut ring = vec![Task::noop(0); cap];
        let place = Placement::batch(20_000, 0, 1024);
        let mut first = 0usize;
        let mut pass = |streaming: bool| {
            let base = ring.as_mut_ptr();
            for (i, t) in tasks.iter().enumerate() {
                let dst = unsafe { base.add((first + i) & (cap - 1)) };
                // SAFETY: in bounds (masked), a `Task` slot of the ring.
                unsafe { if streaming { write_record(dst, place.apply(i, t)) } else { dst.write(place.apply(i, t)) } }
            }
            fence();
            first += tasks.len();
            std::hint::black_box(&ring);
        };
        let plain = med(|| pass(false));
        let streaming = med(|| pass(true));
        println!("20k stage into a 16 MB ring: plain {plain:.1} us, streaming stores {streaming:.1} us");
    }
}
