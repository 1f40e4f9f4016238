//! Tasks written with the task author's toolbox: warp reductions and scans, the math
//! functions `#![no_std]` lacks, and an inline result of a small `Pod`.

use bytemuck::{Pod, Zeroable};
use resident_device::{ArgError, Declare, DeviceTask, Slice, Status, TaskCx, TaskId, inline_result, math};

/// `out[i] = exp(x[i] - max) / sum_j exp(x[j] - max)` over one slice (a softmax, by one
/// warp); result: `[max, sum]` as an `[f32; 2]` (`resident_device::inline_result`).
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Softmax {
    pub x: Slice<f32>,
    pub out: Slice<f32>,
}

impl DeviceTask for Softmax {
    const ID: TaskId = TaskId(0x208);

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.read(self.x);
        d.write(self.out);
        if self.x.len != self.out.len || self.x.len == 0 { Err(ArgError::Bad("softmax: x and out of one non-zero length")) } else { Ok(()) }
    }

    // Out of line, as docs/custom-tasks.md advises for a task with loops of its own:
    // the persistent loop's registers stay what the other tasks need.
    #[inline(never)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let (x, out) = cx.view2(self.x, self.out)?;
        if x.len() != out.len() || x.is_empty() {
            return Err(Status::BadArgs);
        }
        let mut m = f32::NEG_INFINITY;
        for i in cx.lane_range(x.len()) {
            m = m.max(x.read(i)?);
        }
        let m = cx.warp_max(m);
        let mut s = 0f32;
        for i in cx.lane_range(x.len()) {
            s += math::expf(x.read(i)? - m);
        }
        let s = cx.warp_sum(s);
        for i in cx.lane_range(x.len()) {
            out.write(i, math::expf(x.read(i)? - m) / s)?;
        }
        Ok(inline_result([m, s]))
    }
}

/// Writes the elements of `x` above `threshold` to the front of `out`, in their order
/// (a stream compaction: an exclusive scan of the lanes' flags places each); result:
/// how many.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Compact {
    pub x: Slice<f32>,
    pub out: Slice<f32>,
    pub threshold: f32,
}

impl DeviceTask for Compact {
    const ID: TaskId = TaskId(0x209);

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.read(self.x);
        d.write(self.out);
        if self.out.len < self.x.len { Err(ArgError::Bad("compact: out shorter than x")) } else { Ok(()) }
    }

    #[inline(never)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let (x, out) = cx.view2(self.x, self.out)?;
        if out.len() < x.len() {
            return Err(Status::BadArgs);
        }
        let width = cx.warp_width();
        let mut kept = 0u32;
        // A round per `width` elements, every lane in every round (the scan is
        // warp-collective): lane `l` looks at element `base + l`.
        let mut base = 0;
        while base < x.len() {
            let i = base + cx.lane();
            let v = if i < x.len() { x.read(i)? } else { 0.0 };
            let keep = (i < x.len() && v > self.threshold) as u32;
            let at = cx.warp_scan_exclusive(keep, 0, |a, b| a + b);
            if keep == 1 {
                out.write(kept + at, v)?;
            }
            // The round's count, from the last lane: its exclusive sum plus its flag.
            kept += cx.broadcast(at + keep, width - 1);
            base += width;
        }
        Ok(kept as u64)
    }
}
