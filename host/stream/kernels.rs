//! Launches of the embedded ordinary kernels (`device/src/kernels/`) on a stream, with
//! their device ranges tracked like copies. On the CPU device the same kernel bodies
//! run on the stream's thread, as one block walking the whole range.

use bytemuck::Pod;
use resident_device::kernels::pipeline::PipelineParams;
use resident_device::kernels::spin_write::SpinWriteParams;
use std::sync::Arc;
use std::time::Duration;

use super::cpu::CpuLaunch;
use super::device_buffer::DeviceView;
use super::raw::{RawKernel, RawStream};
use super::stream::Stream;
use super::tracker::{Use, ordered};
use crate::driver::launch::{self, RawLaunch};
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
        if Arc::ptr_eq(i.mem, o.mem) && i.bytes != o.bytes && i.bytes.start < o.bytes.end && o.bytes.start < i.bytes.end {
            return Err(Error::Config("pipeline: input and output partly overlap".into()));
        }
        let params = PipelineParams { input: input.ptr(), output: output.ptr(), len: input.len() as u64, iters, _pad: 0 };
        // On the CPU one block: a GPU grid's stride would walk the array in 32 passes.
        let blocks = match self.raw {
            RawStream::Cuda(_) => (input.len() as u64).div_ceil(BLOCK as u64).clamp(1, (self.gpu.sm_count() * BLOCKS_PER_SM) as u64) as u32,
            RawStream::Cpu(_) => 1,
        };
        // SAFETY: the kernel takes one `PipelineParams`, naming the two views, which the
        // tracker orders with other streams' uses and the stream keeps alive.
        unsafe {
            self.launch_tracked(
                self.gpu.inner.pipeline,
                ("resident_pipeline", "cuLaunchKernel(resident_pipeline)"),
                blocks,
                BLOCK,
                params,
                &[i, o],
            )
        }
    }

    /// One thread waits `duration` on the device clock (the host clock on the CPU
    /// device), then writes `value` into `target[0]` (for ordering tests and
    /// demonstrations). A duration beyond `u64::MAX` nanoseconds (584 years) waits that
    /// long.
    pub fn spin_write(&self, target: DeviceView<'_, u32>, value: u32, duration: Duration) -> Result<()> {
        if target.is_empty() {
            return Err(Error::LengthMismatch { expected: 1, got: 0 });
        }
        self.gpu.same_device(target.gpu())?;
        let t = target.slice(0..1);
        // Saturated, not wrapped: a wrapped count could wait for almost nothing.
        let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        let params = SpinWriteParams { target: t.ptr(), nanos, value, _pad: 0 };
        // SAFETY: the kernel takes one `SpinWriteParams`, naming one element of the view.
        unsafe {
            self.launch_tracked(
                self.gpu.inner.spin_write,
                ("resident_spin_write", "cuLaunchKernel(resident_spin_write)"),
                1,
                1,
                params,
                &[t.use_(true)],
            )
        }
    }

    /// Launches a built-in kernel touching `uses`, ordered by the tracker. `names`: the
    /// kernel's, and the driver call's for errors.
    ///
    /// # Safety
    /// `f` takes one by-value `P`, valid for these memory ranges (checked by callers).
    unsafe fn launch_tracked<P: Pod>(
        &self,
        f: RawKernel,
        (name, call): (&'static str, &'static str),
        grid: u32,
        block: u32,
        params: P,
        uses: &[Use<'_>],
    ) -> Result<()> {
        self.gpu.bind()?;
        match (&self.raw, f) {
            (RawStream::Cuda(s), RawKernel::Cuda(f)) => ordered(self.on(), uses, || {
                let cfg = RawLaunch { grid: (grid, 1, 1), block: (block, 1, 1), ..RawLaunch::default() };
                let mut p = params;
                // SAFETY: the caller's contract; the context is bound.
                unsafe { launch::launch(f, s.raw(), &cfg, (&raw mut p).cast(), call) }
            }),
            (RawStream::Cpu(q), RawKernel::Cpu(k)) => {
                let l = CpuLaunch {
                    name: name.into(),
                    body: k.body,
                    grid,
                    shared_bytes: 0,
                    cooperative: false,
                    params: bytemuck::bytes_of(&params).to_vec(),
                };
                // SAFETY: the caller's contract; the operation holds the allocations.
                q.tracked(self.on(), uses, Arc::new(move || unsafe { l.execute() }))
            }
            _ => Err(Error::Config(format!("{name}: a kernel of another backend than the stream's"))),
        }
    }
}
