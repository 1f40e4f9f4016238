//! `resident_spin_write`: one thread waits `nanos` on the device clock, then stores
//! `value` at `target`. For ordering tests: work that another stream must not see too
//! early, and work that takes a known minimum time (events must time at least that).

use bytemuck::{Pod, Zeroable};

use crate::arch;

/// The kernel's one by-value argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct SpinWriteParams {
    /// Device address of one `u32`.
    pub target: u64,
    /// How long to wait first, in nanoseconds of `globaltimer`.
    pub nanos: u64,
    /// The value to store.
    pub value: u32,
    /// Fills the struct to 24 bytes; unused.
    pub _pad: u32,
}

const _: () = assert!(core::mem::size_of::<SpinWriteParams>() == 24);

/// Waits, then writes; returns the nanoseconds actually spent. Call from one thread.
///
/// # Safety
/// `p.target` must be valid for one `u32` that nothing else writes meanwhile.
#[inline(always)]
pub unsafe fn run(p: &SpinWriteParams) -> u64 {
    let start = arch::globaltimer();
    let mut spent = 0;
    while spent < p.nanos {
        arch::nanosleep((p.nanos - spent).min(1_000) as u32);
        spent = arch::globaltimer().wrapping_sub(start);
    }
    // A volatile store: the write must happen after the loop, once, where it is; stream
    // order (kernel completion) is what publishes it to later work.
    unsafe { core::ptr::write_volatile(p.target as *mut u32, p.value) };
    spent
}

/// The kernel (`resident_spin_write` in the runtime's image): thread 0 of block 0 waits,
/// then writes. Launch with one thread.
pub struct SpinWrite;

impl crate::DeviceKernel for SpinWrite {
    type Params = SpinWriteParams;
    #[inline(always)]
    unsafe fn run(p: &SpinWriteParams) {
        if arch::block_idx() == 0 && arch::thread_idx() == 0 {
            unsafe { run(p) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_then_writes() {
        let mut target = 0u32;
        let p = SpinWriteParams { target: &raw mut target as u64, nanos: 2_000_000, value: 7, _pad: 0 };
        let spent = unsafe { run(&p) };
        assert!(spent >= 2_000_000);
        assert_eq!(target, 7);
    }
}
