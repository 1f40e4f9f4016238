//! A histogram with atomics: every warp counts its slice in its own scratch shared
//! memory first (atomics there are cheap and uncontended across warps), then adds its
//! counts to the buffer's bins with global atomics, one per bin it saw. Bins that do not
//! fit the scratch go straight to the buffer.

use bytemuck::{Pod, Zeroable};
use resident_device::{ArgError, Declare, DeviceTask, Slice, Status, TaskCx, TaskId};

/// `bins[(data[i] >> shift) % bins.len] += 1` for every element of `data`; result: the
/// number of elements counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Histogram {
    pub data: Slice<u32>,
    pub bins: Slice<u32>,
    pub shift: u32,
}

impl DeviceTask for Histogram {
    const ID: TaskId = TaskId(0x200);

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.read(self.data);
        d.atomic(self.bins);
        if self.bins.len == 0 {
            return Err(ArgError::Bad("a histogram needs at least one bin"));
        }
        if self.shift >= 32 { Err(ArgError::Bad("shift must be below 32")) } else { Ok(()) }
    }

    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        // Everything that may fail, first and warp-uniformly: both slices' table entries
        // (loaded together), then the arguments.
        let (data, bins) = (cx.lookup(self.data), cx.lookup(self.bins));
        let (data, bins) = (data.view()?, bins.view()?);
        let (n, shift) = (bins.len(), self.shift);
        if n == 0 || shift >= 32 {
            return Err(Status::BadArgs);
        }
        let bin = |v: u32| (v >> shift) % n;
        let local = cx.scratch::<u32>();
        if n <= local.len() {
            // Indices below come from `lane_range` over each view's own length and from
            // `bin`, which is below `n`: the views' checks never fail here.
            for b in cx.lane_range(n) {
                local.write(b, 0)?;
            }
            cx.sync_warp();
            for i in cx.lane_range(data.len()) {
                local.atomic_add(bin(data.read(i)?), 1)?;
            }
            // Every lane's counts before any lane reads them.
            cx.sync_warp();
            for b in cx.lane_range(n) {
                let c = local.read(b)?;
                if c != 0 {
                    bins.atomic_add(b, c)?;
                }
            }
        } else {
            for i in cx.lane_range(data.len()) {
                bins.atomic_add(bin(data.read(i)?), 1)?;
            }
        }
        Ok(data.len() as u64)
    }
}

/// Most children one [`HistogramSplit`] pushes.
pub const MAX_CHILDREN: u32 = 256;

/// A [`Histogram`] of `data`, cut on the device into chunks of `chunk` elements, one
/// pushed task each; result: the number of tasks pushed. The children count in the same
/// bins, and the host's ticket waits for all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct HistogramSplit {
    pub data: Slice<u32>,
    pub bins: Slice<u32>,
    pub shift: u32,
    pub chunk: u32,
}

impl HistogramSplit {
    fn children(&self) -> Option<u32> {
        if self.chunk == 0 {
            return None;
        }
        let k = self.data.len.div_ceil(self.chunk);
        (k <= MAX_CHILDREN).then_some(k)
    }
}

impl DeviceTask for HistogramSplit {
    const ID: TaskId = TaskId(0x201);

    /// What its children touch (the same slices), and their type.
    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.read(self.data);
        d.atomic(self.bins);
        d.spawns(Histogram::ID);
        if self.children().is_none() {
            return Err(ArgError::Bad("chunk must be nonzero and cut the data into at most 256 tasks"));
        }
        Histogram { data: self.data, bins: self.bins, shift: self.shift }.declare(&mut Declare::new(&mut |_| {}))
    }

    #[inline(never)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let k = self.children().ok_or(Status::BadArgs)?;
        for c in 0..k {
            let start = c * self.chunk;
            let len = self.chunk.min(self.data.len - start);
            let data = self.data.sub(start, len).ok_or(Status::OutOfRange)?;
            // The child's own run checks its slices against the buffer table again.
            cx.spawn(&Histogram { data, bins: self.bins, shift: self.shift })?;
        }
        Ok(k as u64)
    }
}
