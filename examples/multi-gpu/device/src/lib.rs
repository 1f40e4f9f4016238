//! The device code of the multi-GPU example: a two-stage job split across two devices,
//! the first stage pushing the second's tasks into the other device's runtime through a
//! link (`TaskCx::push_to`), with no host round trip in between.
//!
//! - [`CountChunk`] (device A): counts its chunk of values into [`BINS`] bins (each lane
//!   in registers, then one warp reduction per bin) and pushes an [`AddBins`] task with
//!   the counts to device B;
//! - [`AddBins`] (device B): adds the counts it carries to B's bins with atomics.
#![no_std]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

use bytemuck::{Pod, Zeroable};
use resident_device::shared::link::LinkId;
use resident_device::{ArgError, Builtins, Declare, DeviceTask, Slice, Status, TaskCx, TaskId};

/// Bins of the job's histogram: `(value >> shift) % BINS`.
pub const BINS: u32 = 8;

/// Stage 1: counts `data` (this runtime's) into `BINS` bins and pushes the counts
/// through `link` as an [`AddBins`] on `bins` (the other runtime's buffer: this one does
/// not check it, the other does); result: the values counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct CountChunk {
    pub data: Slice<u32>,
    pub bins: Slice<u32>,
    pub link: LinkId,
    pub shift: u32,
}

impl DeviceTask for CountChunk {
    const ID: TaskId = TaskId(0x300);

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.read(self.data);
        if self.shift >= 32 { Err(ArgError::Bad("shift must be below 32")) } else { Ok(()) }
    }

    #[inline(never)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let data = cx.view(self.data)?;
        if self.shift >= 32 {
            return Err(Status::BadArgs);
        }
        let mut mine = [0u32; BINS as usize];
        for i in cx.lane_range(data.len()) {
            mine[((data.read(i)? >> self.shift) % BINS) as usize] += 1;
        }
        let mut counts = [0u32; BINS as usize];
        for (c, m) in counts.iter_mut().zip(mine) {
            *c = cx.warp_sum_u32(m);
        }
        cx.push_to(self.link, &AddBins { bins: self.bins, counts, _pad: 0 })?;
        Ok(data.len() as u64)
    }
}

/// Stage 2: `bins[b] += counts[b]` for each of the `BINS` bins (atomics: every chunk's
/// task adds to the same bins).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct AddBins {
    pub bins: Slice<u32>,
    pub counts: [u32; BINS as usize],
    pub _pad: u32,
}

impl DeviceTask for AddBins {
    const ID: TaskId = TaskId(0x301);

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.atomic(self.bins);
        if self.bins.len != BINS { Err(ArgError::Bad("AddBins: bins must be 8 counters")) } else { Ok(()) }
    }

    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let bins = cx.view(self.bins)?;
        if bins.len() != BINS {
            return Err(Status::BadArgs);
        }
        // Spread over the warp's lanes (one lane on the CPU backend does all 8).
        for b in cx.lane_range(BINS) {
            if self.counts[b as usize] != 0 {
                bins.atomic_add(b, self.counts[b as usize])?;
            }
        }
        Ok(0)
    }
}

resident_device::task_set! {
    /// The job's two stages and the built-in tasks; both devices' runtimes load it.
    pub struct TwoStage: Builtins { CountChunk, AddBins }
}
