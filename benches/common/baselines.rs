//! The baselines the persistent runtime is measured against, written on the public API
//! alone (`Runtime::module`, `Probe::one_task_params`, `Probe::table_params`,
//! `Stream::launch`, `Stream::capture`): the launch a CUDA programmer writes for a known
//! set of tasks, one launch over the task table (`resident_table`, a warp per task and
//! the set's dispatch as its switch), from device memory or fed from the host (records
//! written into pinned memory, one copy, one launch, one synchronize); one kernel launch
//! per task (`resident_one_task`, one warp), with and without programmatic dependent
//! launch, the same launches captured once into a CUDA Graph and replayed; and two
//! ceilings for memory-bound tasks: a device copy, and the axpy task's loop over every
//! slice in one launch (`resident_axpy_flat`: no dispatch at all).
//!
//! The rivals of trees of tasks spawned on the device (the `tree` task): one launch per
//! level, a warp per node, as a CUDA programmer writes a tree without device-side
//! spawning. For a full tree, whose level sizes the host knows, every level's launch
//! back to back and one synchronize (`resident_tree_level`); for a data-dependent tree,
//! each level appends the next one's node ids on the device and the host copies its
//! count back before it can size the next launch (`resident_tree_grow`: a round trip per
//! level). CUDA only. Shared by the benchmarks and tests/gpu.rs.
//!
//! Run them with the persistent kernel stopped (`Runtime::close`): nothing resident
//! then shares the SMs with them; they use the runtime's module and buffer table, so
//! the same `Buffer`s serve both.
#![allow(dead_code)]

use resident::stream::{DeviceBuffer, Function, Graph, LaunchConfig, PinnedBuffer, Stream};
use resident::{Buffer, Completion, Error, OneTaskParams, Result, Runtime, Task};
use resident_device::kernels::axpy_flat::AxpyFlatParams;
use resident_device::kernels::tree_level::{TreeGrowParams, TreeLevelParams};
use resident_device::shared::TableParams;
use resident_device::shared::builtin::MAX_TREE_FANOUT;

/// Launch-per-task and graph-replay execution of task lists.
pub struct Baselines {
    one_task: Function<OneTaskParams>,
    table: Function<TableParams>,
    axpy_flat: Function<AxpyFlatParams>,
    tree_level: Function<TreeLevelParams>,
    tree_grow: Function<TreeGrowParams>,
    /// One completion record per task.
    completions: DeviceBuffer<Completion>,
    stream: Stream,
}

/// The device memory of [`Baselines::tree_read_back`] ([`Baselines::tree_scratch`]):
/// two lists of node ids, one level's read while the next's is written, the levels'
/// counters, and the pinned word each count is read back into.
pub struct TreeScratch {
    /// Node ids of the levels, alternately: level `l + 1` is written into `levels[l % 2]`.
    levels: [DeviceBuffer<u32>; 2],
    /// `counters[l]`: nodes of level `l + 1`, appended by level `l`'s launch.
    counters: DeviceBuffer<u32>,
    /// Zeros: copied over the counters at the start of a run; the first of them is the
    /// root's id (0), the root level's list.
    zeros: DeviceBuffer<u32>,
    /// Where a level's count is read back.
    count: PinnedBuffer<u32>,
    /// Ids each of `levels` holds: the widest level that fits.
    max_level: u32,
    /// Most levels below the root.
    depth: u32,
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
        let gpu = rt.device()?;
        let one_task = rt.module()?.function::<OneTaskParams>("resident_one_task")?;
        let table = rt.module()?.function::<TableParams>("resident_table")?;
        let axpy_flat = gpu.kernels().function::<AxpyFlatParams>("resident_axpy_flat")?;
        let tree_level = gpu.kernels().function::<TreeLevelParams>("resident_tree_level")?;
        let tree_grow = gpu.kernels().function::<TreeGrowParams>("resident_tree_grow")?;
        let completions = gpu.alloc_zeroed::<Completion>(max_tasks.max(1))?;
        Ok(Self { one_task, table, axpy_flat, tree_level, tree_grow, completions, stream: gpu.stream()? })
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
            .map(|(i, t)| rt.probe().one_task_params(t, i as u32, base + (i * size_of::<Completion>()) as u64))
            .collect::<Result<_>>()?;
        Ok(Launches(params))
    }

    /// `tasks` as a table for `resident_table`, checked once (out of the timed runs) and
    /// uploaded to device memory.
    pub fn table(&self, rt: &Runtime, tasks: &[Task]) -> Result<Table> {
        let gpu = self.stream.device();
        let dev = gpu.alloc_zeroed::<Task>(tasks.len().max(1))?;
        let (records, params) = rt.probe().table_params(tasks, dev.device_ptr())?;
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
        self.stream.device().scope(|s| {
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

    /// One warp per item: `count` warps in 256-thread blocks (on the CPU device, whose
    /// blocks are one one-lane warp each, `count` blocks).
    fn warps(&self, count: u32) -> Result<LaunchConfig> {
        if self.stream.device().is_cpu() {
            return Ok(LaunchConfig::new(count.max(1), 32));
        }
        match count.checked_mul(32) {
            Some(threads) => Ok(LaunchConfig::for_elements(threads, 256)),
            None => Err(Error::Config(format!("{count} warps do not fit one launch"))),
        }
    }

    /// Checks that a tree of `depth` levels below the root and `fanout` children per
    /// node (the most, for an irregular one) fits `marks`, as `Task::tree` checks it.
    fn check_tree(marks: &Buffer<u32>, depth: u32, fanout: u32) -> Result<()> {
        if depth > 0 && !(1..=MAX_TREE_FANOUT).contains(&fanout) {
            return Err(Error::Config(format!("tree fanout {fanout}: 1 to {MAX_TREE_FANOUT}")));
        }
        match Task::tree_nodes(depth, fanout) {
            Some(nodes) if nodes as usize <= marks.len() => Ok(()),
            Some(nodes) => Err(Error::LengthMismatch { expected: nodes as usize, got: marks.len() }),
            None => Err(Error::Config(format!("a tree of depth {depth} and fanout {fanout} has more than 2^32 nodes"))),
        }
    }

    /// Every node of the full tree of `depth` levels below the root and `fanout`
    /// children per node marks itself (`marks[node] += 1`, as the `tree` task), one
    /// launch per level (a warp per node), all back to back on the stream, then one
    /// synchronize: the rival of a spawned tree that knows its level sizes.
    pub fn tree_by_levels(&self, marks: &Buffer<u32>, depth: u32, fanout: u32) -> Result<()> {
        Self::check_tree(marks, depth, fanout)?;
        // Level `l`: nodes `first..first + count`, `count = fanout^l`.
        let (mut first, mut count) = (0u32, 1u32);
        for _ in 0..=depth {
            let p = TreeLevelParams { marks: marks.raw_address(), first, count };
            // SAFETY: the level's nodes lie in the tree, which fits `marks` (checked
            // above); the buffer lives until the stream is synchronized below, and
            // only these launches' atomics write it meanwhile.
            unsafe { self.stream.launch(&self.tree_level, self.warps(count)?, p) }?;
            // No overflow: the tree's node count fits a u32 (checked); the count past
            // the last level is not used.
            first += count;
            count = count.saturating_mul(fanout);
        }
        self.stream.synchronize()
    }

    /// Scratch memory for [`Baselines::tree_read_back`] on trees of up to `depth`
    /// levels below the root and up to `max_level` nodes in a level.
    pub fn tree_scratch(&self, max_level: usize, depth: u32) -> Result<TreeScratch> {
        let gpu = self.stream.device();
        if max_level == 0 || max_level > u32::MAX as usize / 32 {
            return Err(Error::Config(format!("tree_scratch: {max_level} nodes in a level: 1 to 2^27 - 1")));
        }
        let levels = [gpu.alloc_zeroed::<u32>(max_level)?, gpu.alloc_zeroed::<u32>(max_level)?];
        let counters = gpu.alloc_zeroed::<u32>(depth.max(1) as usize)?;
        let zeros = gpu.alloc_zeroed::<u32>(depth.max(1) as usize)?;
        let count = gpu.pinned::<u32>(1)?;
        Ok(TreeScratch { levels, counters, zeros, count, max_level: max_level as u32, depth })
    }

    /// Every node of the tree of `depth` levels below the root and `fanout` children
    /// per node (the most per node, from `irregular_fanout`, if `irregular`) marks
    /// itself, as a CUDA programmer runs a tree whose level sizes only the device
    /// knows: the counters zeroed (one copy), then per level one launch (a warp per
    /// node, each appending its children's ids to the next level's list) and the next
    /// level's count copied back to the host (an async copy into pinned memory, then a
    /// synchronize), which sizes the next launch; until the depth is exhausted or a
    /// level is empty. Returns the nodes launched. The rival of a spawned
    /// data-dependent tree.
    pub fn tree_read_back(&self, s: &mut TreeScratch, marks: &Buffer<u32>, depth: u32, fanout: u32, irregular: bool) -> Result<u32> {
        Self::check_tree(marks, depth, fanout)?;
        if depth > s.depth {
            return Err(Error::Config(format!("tree_read_back: depth {depth}, the scratch holds counters for {}", s.depth)));
        }
        let n = depth.max(1) as usize;
        self.stream.copy_d2d(s.zeros.slice(..n), s.counters.slice(..n))?;
        // The root's level: one node, id 0, read from the zeros.
        let (mut level, mut count, mut total) = (s.zeros.device_ptr(), 1u32, 0u32);
        for l in 0..=depth {
            let next = &s.levels[l as usize % 2];
            let p = TreeGrowParams {
                marks: marks.raw_address(),
                level,
                // Unused by the leaves' launch (`depth_left == 0`).
                next: next.device_ptr(),
                next_count: if l < depth { s.counters.device_ptr() + (l as usize * size_of::<u32>()) as u64 } else { 0 },
                count,
                fanout,
                irregular: irregular as u32,
                depth_left: depth - l,
                next_capacity: s.max_level,
                _pad: 0,
            };
            // SAFETY: `level` holds `count` ids (the zeros' first for the root, else
            // the ids the previous launch wrote, `count <= max_level` of them, checked
            // below), each a node of the tree, which fits `marks` (checked above); the
            // launch writes at most `max_level` ids into `next`, the other list, and
            // adds to counter `l` of `depth`. Everything lives until the stream is
            // synchronized, by the scopes below or at the end, and only these launches
            // write it meanwhile (stream order; the counters' copies too).
            unsafe { self.stream.launch(&self.tree_grow, self.warps(count)?, p) }?;
            total = total.saturating_add(count);
            if l == depth {
                break;
            }
            let (counter, pinned) = (s.counters.slice(l as usize..l as usize + 1), &mut s.count);
            // The copy follows the launch on the stream; the scope's end synchronizes.
            self.stream.device().scope(|sc| sc.adopt(&self.stream)?.copy_d2h(counter, pinned))?;
            count = s.count[0];
            if count > s.max_level {
                return Err(Error::Config(format!("tree_read_back: level {} has {count} nodes, the scratch holds {}", l + 1, s.max_level)));
            }
            if count == 0 {
                break;
            }
            level = next.device_ptr();
        }
        self.stream.synchronize()?;
        Ok(total)
    }

    /// The completion records of the last `n` baseline tasks.
    pub fn completions(&self, n: usize) -> Result<Vec<Completion>> {
        let mut out = self.completions.to_vec()?;
        out.truncate(n);
        Ok(out)
    }

    /// Two device allocations of `bytes` for [`Baselines::copy`].
    pub fn copy_buffers(&self, bytes: usize) -> Result<(DeviceBuffer<u8>, DeviceBuffer<u8>)> {
        Ok((self.stream.device().alloc_zeroed(bytes)?, self.stream.device().alloc_zeroed(bytes)?))
    }
}
