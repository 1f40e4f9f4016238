//! The baselines the persistent runtime is measured against, built from the same device
//! code: one kernel launch per task (`resident_one_task`, one warp), and the same
//! launches captured once into a CUDA Graph and replayed; and two ceilings for
//! memory-bound tasks: a device copy, and the axpy task's loop over every slice in one
//! launch (`resident_axpy_flat`: no dispatch at all). CUDA backend only.
//!
//! They run on their own stream while the persistent kernel sits idle (its warps sleep
//! up to 2 µs between polls of an empty queue); they use the runtime's module and
//! buffer table, so the same [`crate::Buffer`]s serve both.

use cudarc::driver::sys;
use resident_shared::{Completion, OneTaskParams, Task};

use crate::cuda::driver::check;
use crate::cuda::graph::CapturedGraph;
use crate::cuda::memory::DeviceAlloc;
use crate::cuda::stream::Stream;
use crate::runtime::Shared;
use crate::{Error, Result, Runtime};

/// Launch-per-task and graph-replay execution of task lists, for benchmarks.
pub struct Baselines {
    shared: std::sync::Arc<Shared>,
    // Drop order: memory, then the stream it is freed on.
    completions: DeviceAlloc,
    stream: Stream,
    max_tasks: usize,
}

impl Baselines {
    /// Baselines for lists of up to `max_tasks` tasks. [`Error::NoDevice`] on the CPU
    /// backend.
    pub fn new(rt: &Runtime, max_tasks: usize) -> Result<Self> {
        let shared = rt.shared().clone();
        let cuda = shared.backend.cuda().ok_or(Error::NoDevice)?;
        let stream = Stream::non_blocking(cuda.context(), 0)?;
        let completions = unsafe { DeviceAlloc::zeroed(cuda.context(), max_tasks * size_of::<Completion>(), stream.raw()) }?;
        Ok(Self { shared, completions, stream, max_tasks })
    }

    fn params<'a>(&'a self, tasks: &'a [Task]) -> Result<impl Iterator<Item = OneTaskParams> + 'a> {
        if tasks.len() > self.max_tasks {
            return Err(Error::LengthMismatch { expected: self.max_tasks, got: tasks.len() });
        }
        {
            let p = self.shared.producer.lock().unwrap();
            crate::validate::validate(tasks, &self.shared.set, &p.registry, &p.counters)?;
        }
        let table = self.shared.backend.cuda().unwrap().table_ptr();
        let base = self.completions.ptr();
        Ok(tasks.iter().enumerate().map(move |(i, t)| OneTaskParams {
            task: *t,
            completion: base + (i * size_of::<Completion>()) as u64,
            buffers: table,
            seq: i as u32,
            _pad: [0; 11],
        }))
    }

    fn launch_all(&self, tasks: &[Task]) -> Result<()> {
        let cuda = self.shared.backend.cuda().unwrap();
        for p in self.params(tasks)? {
            cuda.launch_one(&p, self.stream.raw())?;
        }
        Ok(())
    }

    /// Launches one kernel per task, back to back on one stream, and waits for all.
    pub fn launch_per_task(&self, tasks: &[Task]) -> Result<()> {
        self.shared.bind()?;
        self.launch_all(tasks)?;
        self.stream.synchronize()
    }

    /// Captures one launch per task into a CUDA Graph, instantiated and uploaded.
    pub fn capture_graph(&self, tasks: &[Task]) -> Result<Graph<'_>> {
        self.shared.bind()?;
        Ok(Graph { owner: self, inner: CapturedGraph::capture(&self.stream, || self.launch_all(tasks))? })
    }

    /// Copies `bytes` from one device allocation to another and waits: the device's
    /// copy bandwidth, the ceiling for memory-bound tasks. Allocations are made once by
    /// [`Baselines::copy_buffers`].
    pub fn copy(&self, bufs: &CopyBuffers) -> Result<()> {
        self.shared.bind()?;
        check(unsafe { sys::cuMemcpyDtoDAsync_v2(bufs.dst.ptr(), bufs.src.ptr(), bufs.bytes, self.stream.raw()) }, "cuMemcpyDtoDAsync")?;
        self.stream.synchronize()
    }

    /// `y = alpha * x + y` over `x.len() / slice` slices of `slice` floats, one warp per
    /// slice, in one launch of the axpy task's own loop (`resident_axpy_flat`), and
    /// waits: what the tasks' code reaches when dispatch costs nothing.
    pub fn axpy_flat(&self, alpha: f32, x: &crate::Buffer<f32>, y: &crate::Buffer<f32>, slice: usize) -> Result<()> {
        if x.len() != y.len() || slice == 0 || !x.len().is_multiple_of(slice) || x.len() / slice > u32::MAX as usize / 32 {
            return Err(Error::LengthMismatch { expected: x.len(), got: y.len() });
        }
        self.shared.bind()?;
        let cuda = self.shared.backend.cuda().ok_or(Error::NoDevice)?;
        let f = cuda.function("resident_axpy_flat")?;
        let slices = (x.len() / slice) as u32;
        let mut p = resident_device::kernels::axpy_flat::AxpyFlatParams {
            x: x.raw_address(),
            y: y.raw_address(),
            slices,
            slice: slice as u32,
            alpha,
            _pad: 0,
        };
        let mut args = [&raw mut p as *mut std::ffi::c_void];
        const BLOCK: u32 = 256;
        let blocks = (slices * 32).div_ceil(BLOCK);
        // SAFETY: both buffers hold `slices * slice` floats and live until the stream
        // is synchronized below.
        check(
            unsafe { sys::cuLaunchKernel(f, blocks, 1, 1, BLOCK, 1, 1, 0, self.stream.raw(), args.as_mut_ptr(), std::ptr::null_mut()) },
            "cuLaunchKernel(resident_axpy_flat)",
        )?;
        self.stream.synchronize()
    }

    /// Two device allocations of `bytes` for [`Baselines::copy`].
    pub fn copy_buffers(&self, bytes: usize) -> Result<CopyBuffers> {
        // Plain allocations (not on `self.stream`): they may outlive these baselines.
        let ctx = self.shared.backend.cuda().ok_or(Error::NoDevice)?.context();
        Ok(CopyBuffers {
            src: unsafe { DeviceAlloc::zeroed_sync(ctx, bytes) }?,
            dst: unsafe { DeviceAlloc::zeroed_sync(ctx, bytes) }?,
            bytes,
        })
    }

    /// Reads back the completion records of the last `n` baseline tasks.
    pub fn completions(&self, n: usize) -> Result<Vec<Completion>> {
        let mut out = vec![Completion { stamp: 0, status: 0, result: 0 }; n.min(self.max_tasks)];
        unsafe { self.shared.backend.download(self.completions.ptr(), bytemuck::cast_slice_mut(&mut out)) }?;
        Ok(out)
    }
}

impl Drop for Baselines {
    fn drop(&mut self) {
        let _ = self.shared.bind();
    }
}

/// Source and destination of the copy-bandwidth measurement.
pub struct CopyBuffers {
    src: DeviceAlloc,
    dst: DeviceAlloc,
    pub bytes: usize,
}

/// An instantiated graph of one launch per task.
pub struct Graph<'b> {
    owner: &'b Baselines,
    inner: CapturedGraph,
}

impl Graph<'_> {
    /// Replays the whole graph once and waits.
    pub fn replay(&self) -> Result<()> {
        self.inner.replay(&self.owner.stream)
    }
}
