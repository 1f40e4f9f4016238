//! Launches of the embedded ordinary kernels (`device/src/kernels/`) on a stream, with
//! their device ranges tracked like copies.

use bytemuck::Pod;
use cudarc::driver::sys::CUfunction;
use resident_device::kernels::pipeline::PipelineParams;
use resident_device::kernels::spin_write::SpinWriteParams;
use std::time::Duration;

use super::device_buffer::DeviceView;
use super::stream::Stream;
use super::tracker::ordered;
use crate::cuda::launch::{self, RawLaunch};
use crate::{Error, Result};

/// Threads per block of the pipeline kernel.
const BLOCK: u32 = 256;
/// Blocks per SM at most: enough to cover latency; each thread strides over the rest.
const BLOCKS_PER_SM: u32 = 16;

impl Stream {
    /// `output[i] = f(input[i])`, `f` being `iters` dependent multiply-adds
    /// (`resident_device::kernels::pipeline::element`). `input` and `output` may be the
    /// same view (in place), not partly overlapping ones.
    pub fn pipeline(&self, input: DeviceView<'_, f32>, output: DeviceView<'_, f32>, iters: u32) -> Result<()> {
        if input.len() != output.len() {
            return Err(Error::LengthMismatch { expected: input.len(), got: output.len() });
        }
        self.gpu.same_device(input.gpu())?;
        self.gpu.same_device(output.gpu())?;
        let (i, o) = (input.use_(false), output.use_(true));
        if std::ptr::eq(i.tracker, o.tracker) && i.bytes != o.bytes && i.bytes.start < o.bytes.end && o.bytes.start < i.bytes.end {
            return Err(Error::Config("pipeline: input and output partly overlap".into()));
        }
        let params = PipelineParams { input: input.ptr(), output: output.ptr(), len: input.len() as u64, iters, _pad: 0 };
        let blocks = (input.len() as u64).div_ceil(BLOCK as u64).clamp(1, (self.gpu.sm_count() * BLOCKS_PER_SM) as u64) as u32;
        self.gpu.bind()?;
        ordered(self.on(), &[i, o], || unsafe {
            self.launch_raw(self.gpu.inner.pipeline, blocks, BLOCK, params, "cuLaunchKernel(resident_pipeline)")
        })
    }

    /// One GPU thread waits `duration` on the device clock, then writes `value` into
    /// `target[0]` (for ordering tests and demonstrations).
    pub fn spin_write(&self, target: DeviceView<'_, u32>, value: u32, duration: Duration) -> Result<()> {
        if target.is_empty() {
            return Err(Error::LengthMismatch { expected: 1, got: 0 });
        }
        self.gpu.same_device(target.gpu())?;
        let t = target.slice(0..1);
        let params = SpinWriteParams { target: t.ptr(), nanos: duration.as_nanos() as u64, value, _pad: 0 };
        self.gpu.bind()?;
        ordered(self.on(), &[t.use_(true)], || unsafe {
            self.launch_raw(self.gpu.inner.spin_write, 1, 1, params, "cuLaunchKernel(resident_spin_write)")
        })
    }

    /// # Safety
    /// `f` takes one by-value `P`, valid for these memory ranges (checked by callers).
    unsafe fn launch_raw<P: Pod>(&self, f: CUfunction, grid: u32, block: u32, params: P, call: &'static str) -> Result<()> {
        let mut p = params;
        let cfg = RawLaunch { grid: (grid, 1, 1), block: (block, 1, 1), ..RawLaunch::default() };
        unsafe { launch::launch(f, self.raw(), &cfg, (&raw mut p).cast(), call) }
    }
}
