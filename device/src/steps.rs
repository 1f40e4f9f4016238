//! Cycle counts of the persistent loop's steps, in profiling builds only
//! (`--cfg resident_device_timing`, which `resident-build` passes to the device build when
//! `RESIDENT_DEVICE_TIMING` is set; docs/profiling.md). Elsewhere every call here is
//! empty and [`Steps`] holds nothing, so ordinary builds are unchanged.
//!
//! Lane 0 of a worker warp keeps its counters ([`resident_shared::steps`]) in its own
//! memory and stores them, cumulative, into the warp's row of `KernelParams::steps`
//! (mapped pinned memory) every `FLUSH_EVERY` tasks, with volatile stores: the host reads
//! them as they come, nothing is ordered by them.

#[cfg(all(resident_device_timing, target_arch = "nvptx64"))]
mod imp {
    use crate::arch;
    use resident_shared::KernelParams;
    use resident_shared::steps::{FLUSH_EVERY, STEPS, step};

    /// One warp's counters, kept by its lane 0.
    pub struct Steps {
        acc: [u64; STEPS],
        last: u64,
        row: *mut u64,
    }

    impl Steps {
        /// The counters of this warp (none if the host gave no table).
        #[inline(always)]
        pub fn new(p: &KernelParams) -> Self {
            let row = if p.steps == 0 || arch::lane_id() != 0 {
                core::ptr::null_mut()
            } else {
                (p.steps as *mut u64).wrapping_add(arch::global_warp_id() as usize * STEPS)
            };
            Self { acc: [0; STEPS], last: arch::clock64(), row }
        }

        /// Adds the cycles since the last lap to step `k`.
        #[inline(always)]
        pub fn lap(&mut self, k: usize) {
            let now = arch::clock64();
            self.acc[k] += now.wrapping_sub(self.last);
            self.last = now;
        }

        /// Counts a task run, and stores the counters every `FLUSH_EVERY` tasks.
        #[inline(always)]
        pub fn task(&mut self) {
            self.acc[step::TASKS] += 1;
            if !self.row.is_null() && (self.acc[step::TASKS] as u32).is_multiple_of(FLUSH_EVERY) {
                for (i, v) in self.acc.iter().enumerate() {
                    // SAFETY: the warp's own row of `STEPS` words in the host's table.
                    unsafe { core::ptr::write_volatile(self.row.add(i), *v) };
                }
            }
        }
    }
}

#[cfg(not(all(resident_device_timing, target_arch = "nvptx64")))]
mod imp {
    use resident_shared::KernelParams;

    /// Nothing: an ordinary build times nothing.
    pub struct Steps;

    impl Steps {
        /// Nothing to keep.
        #[inline(always)]
        pub fn new(_: &KernelParams) -> Self {
            Self
        }
        /// Nothing.
        #[inline(always)]
        pub fn lap(&mut self, _: usize) {}
        /// Nothing.
        #[inline(always)]
        pub fn task(&mut self) {}
    }
}

pub use imp::Steps;
