//! The baselines the persistent runtime is measured against, written on the public API
//! alone (`Runtime::module`, `Runtime::one_task_params`, `Runtime::table_params`,
//! `Stream::launch`, `Stream::capture`): the launch a CUDA programmer writes for a known
//! set of tasks, one launch over the task table (`resident_table`, a warp per task and
//! the set's dispatch as its switch), from device memory or fed from the host (records
//! written into pinned memory, one copy, one launch, one synchronize); one kernel launch
//! per task (`resident_one_task`, one warp), with and without programmatic dependent
//! launch, the same launches captured once into a CUDA Graph and replayed; and two
//! ceilings for memory-bound tasks: a device copy, and the axpy task's loop over every
//! slice in one launch (`resident_axpy_flat`: no dispatch at all). CUDA only. Shared by
//! the benchmarks and tests/gpu.rs.
//!
//! Run them with the persistent kernel stopped (`Runtime::close`): nothing resident
//! then shares the SMs with them; they use the runtime's module and buffer table, so
//! the same `Buffer`s serve both.
#![allow(dead_code)]

use resident::stream::{DeviceBuffer, Function, Graph, LaunchConfig, PinnedBuffer, Stream};
use resident::{Buffer, Completion, Error, OneTaskParams, Result, Runtime, Task};
use resident_device::kernels::axpy_flat::AxpyFlatParams;
use resident_device::shared::TableParams;

/// Launch-per-task and graph-replay execution of task lists.
pub struct Baselines {
    one_task: Function<OneTaskParams>,
    table: Function<TableParams>,
    axpy_flat: Function<AxpyFlatParams>,
    /// One completion record per task.
    completions: DeviceBuffer<Completion>,
    stream: Stream,
}

/// A task list as launch parameters, one `resident_one_task` launch each.
pub struct Launches(Vec<OneTaskParams>);

/// A task table for `resident_table`: its records (checked), in device memory, and a
/// pinned staging area for the host-fed form.
pub struct Table {
    params: TableParams,
    records: Vec<Task>,
    dev: DeviceBuffer<Task>,
    pinned: PinnedBuffer<Task>,
}

impl Table {
    /// Tasks in the table.
    pub fn len(&self) -> usize {
        self.records.len()
    }
}

impl Baselines {
    /// Baselines for lists of up to `max_tasks` tasks on `rt`'s device.
    pub fn new(rt: &Runtime, max_tasks: usize) -> Result<Self> {
        let gpu = rt.gpu()?;
        let one_task = rt.module()?.function::<OneTaskParams>("resident_one_task")?;
        let table = rt.module()?.function::<TableParams>("resident_table")?;
        let axpy_flat = gpu.kernels().function::<AxpyFlatParams>("resident_axpy_flat")?;
        let completions = gpu.alloc_zeroed::<Completion>(max_tasks.max(1))?;
        Ok(Self { one_task, table, axpy_flat, completions, stream: gpu.stream()? })
    }

    /// The launch parameters of `tasks`, each checked as `submit` checks it (once, out
    /// of the timed runs).
    pub fn prepare(&self, rt: &Runtime, tasks: &[Task]) -> Result<Launches> {
        if tasks.len() > self.completions.len() {
            return Err(Error::LengthMismatch { expected: self.completions.len(), got: tasks.len() });
        }
        let base = self.completions.device_ptr();
        let params = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| rt.one_task_params(t, i as u32, base + (i * size_of::<Completion>()) as u64))
            .collect::<Result<_>>()?;
        Ok(Launches(params))
    }

    /// `tasks` as a table for `resident_table`, checked once (out of the timed runs) and
    /// uploaded to device memory.
    pub fn table(&self, rt: &Runtime, tasks: &[Task]) -> Result<Table> {
        let gpu = self.stream.gpu();
        let dev = gpu.alloc_zeroed::<Task>(tasks.len().max(1))?;
        let (records, params) = rt.table_params(tasks, dev.device_ptr())?;
        dev.slice(..records.len()).write_from(&records)?;
        let pinned = gpu.pinned::<Task>(records.len().max(1))?;
        Ok(Table { params, records, dev, pinned })
    }

    fn launch_table(&self, t: &Table) -> Result<()> {
        let warps_per_block = 256 / 32;
        let grid = t.params.len.div_ceil(warps_per_block).max(1);
        // SAFETY: the table's records were checked against the runtime's live buffers,
        // which outlive the launch (the caller synchronizes before dropping them), and
        // lie in `t.dev`, `len` of them.
        unsafe { self.stream.launch(&self.table, LaunchConfig::new(grid, 256), t.params) }
    }

    /// One launch over the table in device memory, and a synchronize: the rival of a
    /// resident task list.
    pub fn run_table(&self, t: &Table) -> Result<()> {
        self.launch_table(t)?;
        self.stream.synchronize()
    }

    /// The table fed from the host as a CUDA programmer feeds it: the records written
    /// into pinned memory, one async copy, one launch, one synchronize. The rival of a
    /// host-fed batch (time it from the first record written).
    pub fn host_fed_table(&self, t: &mut Table) -> Result<()> {
        let n = t.records.len();
        t.pinned[..n].copy_from_slice(&t.records);
        let (pinned, dev) = (&t.pinned, &t.dev);
        // The scope's end waits for the stream: copy, launch, then one synchronize.
        self.stream.gpu().scope(|s| {
            let st = s.adopt(&self.stream)?;
            st.copy_h2d(pinned.view().slice(..n), dev.slice(..n))?;
            self.launch_table(t)
        })
    }

    fn launch_all(&self, stream: &Stream, launches: &Launches, pdl: bool) -> Result<()> {
        let cfg = if pdl { LaunchConfig::new(1, 32).programmatic() } else { LaunchConfig::new(1, 32) };
        for p in &launches.0 {
            // SAFETY: each task was validated against the runtime's live buffers, which
            // outlive these launches (the caller synchronizes before dropping them); the
            // completion record is one of `completions`.
            unsafe { stream.launch(&self.one_task, cfg, *p) }?;
        }
        Ok(())
    }

    /// Launches one kernel per task, back to back on one stream, and waits for all.
    /// `pdl`: with programmatic dependent launch (each may start before the previous
    /// ends; the tasks must be independent).
    pub fn launch_per_task(&self, launches: &Launches, pdl: bool) -> Result<()> {
        self.launch_all(&self.stream, launches, pdl)?;
        self.stream.synchronize()
    }

    /// Captures one launch per task into a CUDA Graph, instantiated and uploaded (with
    /// programmatic dependent launch edges if `pdl`).
    pub fn capture_graph(&self, launches: &Launches, pdl: bool) -> Result<Graph> {
        let graph = self.stream.capture(|s| self.launch_all(s, launches, pdl))?;
        // The first replay uploads nothing more; run it once so that it costs no more
        // than the next.
        self.replay(&graph)?;
        Ok(graph)
    }

    /// Replays `graph` once and waits.
    pub fn replay(&self, graph: &Graph) -> Result<()> {
        graph.launch(&self.stream)?;
        self.stream.synchronize()
    }

    /// Copies `src` into `dst` on the device and waits: the copy bandwidth, the ceiling
    /// for memory-bound tasks.
    pub fn copy(&self, src: &DeviceBuffer<u8>, dst: &DeviceBuffer<u8>) -> Result<()> {
        self.stream.copy_d2d(src, dst)?;
        self.stream.synchronize()
    }

    /// `y = alpha * x + y` over `x.len() / slice` slices of `slice` floats, one warp per
    /// slice, in one launch of the axpy task's own loop, and waits: what the tasks' code
    /// reaches when dispatch costs nothing.
    pub fn axpy_flat(&self, alpha: f32, x: &Buffer<f32>, y: &Buffer<f32>, slice: usize) -> Result<()> {
        if x.len() != y.len() || slice == 0 || !x.len().is_multiple_of(slice) || x.len() / slice > u32::MAX as usize / 32 {
            return Err(Error::LengthMismatch { expected: x.len(), got: y.len() });
        }
        let slices = (x.len() / slice) as u32;
        let p = AxpyFlatParams { x: x.raw_address(), y: y.raw_address(), slices, slice: slice as u32, alpha, _pad: 0 };
        // SAFETY: both buffers hold `slices * slice` floats and live until the stream is
        // synchronized below.
        unsafe { self.stream.launch(&self.axpy_flat, LaunchConfig::for_elements(slices * 32, 256), p) }?;
        self.stream.synchronize()
    }

    /// The completion records of the last `n` baseline tasks.
    pub fn completions(&self, n: usize) -> Result<Vec<Completion>> {
        let mut out = self.completions.to_vec()?;
        out.truncate(n);
        Ok(out)
    }

    /// Two device allocations of `bytes` for [`Baselines::copy`].
    pub fn copy_buffers(&self, bytes: usize) -> Result<(DeviceBuffer<u8>, DeviceBuffer<u8>)> {
        Ok((self.stream.gpu().alloc_zeroed(bytes)?, self.stream.gpu().alloc_zeroed(bytes)?))
    }
}
