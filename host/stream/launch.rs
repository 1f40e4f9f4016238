//! The typed launch API for ordinary kernels, in the style of cudarc's launch builder:
//! a kernel image's [`Module`] on a device, its kernels as [`Function`]s typed by their
//! one by-value parameter struct, a [`LaunchConfig`], and [`Stream::launch`]. Launches
//! can be captured into a [`Graph`] and replayed.
//!
//! ```
//! # fn main() -> resident::Result<()> {
//! use resident::stream::{Device, LaunchConfig};
//! use resident_device::kernels::pipeline::PipelineParams;
//! let gpu = Device::cpu();                       // or Device::auto()?: a GPU if there is one
//! let data = gpu.alloc_from(&vec![1.0f32; 1 << 20])?;
//! let f = gpu.kernels().function::<PipelineParams>("resident_pipeline")?;
//! let p = PipelineParams { input: data.device_ptr(), output: data.device_ptr(), len: 1 << 20, iters: 4, _pad: 0 };
//! let s = gpu.stream()?;
//! // SAFETY: both addresses hold 2^20 floats, alive until the stream is synchronized.
//! unsafe { s.launch(&f, LaunchConfig::for_elements(1 << 20, 256), p) }?;
//! s.synchronize()?;
//! # Ok(()) }
//! ```
//!
//! A launch is as unchecked as any CUDA kernel's: the parameters carry raw addresses,
//! which nothing can check, hence `unsafe`. What is checked: the function belongs to
//! the stream's device, the parameter struct has the size the kernel takes (the
//! driver's `cuFuncGetParamInfo`; on the CPU, the image's kernel table), the shape is
//! within the device's limits, and a cooperative grid fits the device at once.
//! Launches are not ordered by the buffers' access tracking (their addresses are
//! opaque): order them with events or one stream.
//!
//! On the CPU device (`Device::cpu`) a kernel runs its host build: a block is one thread
//! with a warp of one lane (`block_dim() == 1`), the grid one-dimensional; an ordinary
//! launch runs its blocks one after another on the stream's thread, a cooperative one
//! every block on a thread of its own at once (at most 1024 blocks). `shared_bytes` is
//! the block's `dyn_smem_bytes()` (at most `arch::CPU_SMEM_BYTES`); the block's `block`
//! shape is checked as on a GPU and otherwise unused; `programmatic` means nothing.

use bytemuck::Pod;
use std::marker::PhantomData;
use std::sync::Arc;

use super::cpu::{Captured, CpuLaunch, CpuModule, MAX_COOPERATIVE_BLOCKS};
use super::device::Device;
use super::raw::{RawKernel, RawModule, RawStream};
use super::stream::Stream;
use crate::driver::graph::CapturedGraph;
use crate::driver::launch::{self, RawLaunch};
use crate::driver::module::Module as CudaModule;
use crate::{Error, KernelImage, Result};

/// A kernel image's kernels, loaded on one device ([`Device::load`], [`Device::kernels`],
/// `Runtime::module`): a CUDA module, or on the CPU device the image's kernels compiled
/// for the host. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Module {
    pub(crate) raw: RawModule,
    pub(crate) image: &'static str,
    pub(crate) gpu: Device,
}

impl Module {
    /// The kernel `name`, typed by its parameter struct `P` (the `DeviceKernel::Params`
    /// of a kernel built by `resident-build`). An error if the module has no such kernel
    /// or the kernel takes other parameters than one `P`.
    pub fn function<P: Pod>(&self, name: &str) -> Result<Function<P>> {
        let (raw, params) = match &self.raw {
            RawModule::Cuda(m) => {
                let f = m.function(name)?;
                // SAFETY: a function of this module, loaded in its context.
                (RawKernel::Cuda(f), unsafe { launch::params(f) })
            }
            RawModule::Cpu(m) => {
                let k = m
                    .function(name)
                    .ok_or_else(|| Error::Config(format!("kernel image `{}` has no kernel `{name}` compiled for the host", self.image)))?;
                (RawKernel::Cpu(k), Some((1, k.param_bytes)))
            }
        };
        if let Some((count, size)) = params
            && (count != 1 || size != size_of::<P>())
        {
            return Err(Error::Config(format!(
                "kernel `{name}` of image `{}` takes {count} parameter(s), the first of {size} bytes; the launch passes one of {} bytes",
                self.image,
                size_of::<P>()
            )));
        }
        Ok(Function { raw, name: name.into(), module: self.clone(), _params: PhantomData })
    }

    /// The image this module was loaded from.
    pub fn image(&self) -> &'static str {
        self.image
    }

    /// What the driver reports of kernel `name` (as `cudaFuncGetAttributes`), and how
    /// many blocks of `threads` threads fit an SM at once (no dynamic shared memory).
    /// On the CPU device nothing is compiled for a GPU: `None`.
    pub fn kernel_info(&self, name: &str, threads: u32) -> Result<Option<KernelInfo>> {
        let RawModule::Cuda(m) = &self.raw else { return Ok(None) };
        let f = m.function(name)?;
        self.gpu.bind()?;
        // SAFETY (both): a function of this module, loaded in its context, now bound.
        let [registers, local_bytes, static_shared_bytes, max_threads_per_block] = unsafe { launch::attributes(f) }?;
        let blocks_per_sm =
            if threads == 0 || threads > max_threads_per_block { 0 } else { unsafe { launch::blocks_per_sm(f, threads, 0) }? };
        Ok(Some(KernelInfo { registers, local_bytes, static_shared_bytes, max_threads_per_block, blocks_per_sm }))
    }

    /// A kernel image's kernels on the CPU device `gpu`.
    pub(crate) fn cpu(image: &KernelImage, gpu: &Device) -> Self {
        Module { raw: RawModule::Cpu(Arc::new(CpuModule::new(image))), image: image.name(), gpu: gpu.clone() }
    }
}

/// A kernel as the driver sees it ([`Module::kernel_info`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// Registers per thread.
    pub registers: u32,
    /// Local memory per thread: its stack frame, spilled registers included.
    pub local_bytes: u32,
    /// Static shared memory per block.
    pub static_shared_bytes: u32,
    /// The most threads a block of it may have (its registers may lower CUDA's 1024).
    pub max_threads_per_block: u32,
    /// Blocks of the asked size that fit one SM at once.
    pub blocks_per_sm: u32,
}

/// Threads a block may have, on every device (CUDA's limit; the CPU checks it too).
const MAX_BLOCK_THREADS: u32 = 1024;

/// A kernel of a [`Module`], taking one `P` by value.
pub struct Function<P> {
    raw: RawKernel,
    name: Arc<str>,
    module: Module,
    _params: PhantomData<fn(P)>,
}

// SAFETY: a CUDA function handle is an immutable driver object, usable from any thread
// of its context (bound before each use); the module it belongs to is kept alive. A CPU
// kernel is a function pointer.
unsafe impl<P> Send for Function<P> {}
unsafe impl<P> Sync for Function<P> {}

impl<P> std::fmt::Debug for Function<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function").field("name", &self.name).field("image", &self.module.image).finish()
    }
}

impl<P> Function<P> {
    /// The kernel's entry point name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Blocks of this kernel, of `threads` threads and `shared_bytes` of dynamic shared
    /// memory each, that fit on one SM at once (the occupancy query). On the CPU device
    /// a core runs one block at a time: 1, or 0 if `shared_bytes` exceeds what a CPU
    /// block has (`arch::CPU_SMEM_BYTES`). Blocks of 0 or more than 1024 threads are an
    /// error (`Error::Config`), as a launch of them is.
    pub fn blocks_per_sm(&self, threads: u32, shared_bytes: u32) -> Result<u32> {
        if threads == 0 || threads > MAX_BLOCK_THREADS {
            return Err(Error::Config(format!(
                "occupancy of `{}`: blocks of {threads} threads; a block has 1 to {MAX_BLOCK_THREADS}",
                self.name
            )));
        }
        match self.raw {
            RawKernel::Cuda(f) => {
                self.module.gpu.bind()?;
                // SAFETY: a loaded function of the bound context.
                unsafe { launch::blocks_per_sm(f, threads, shared_bytes) }
            }
            RawKernel::Cpu(_) => Ok((shared_bytes as usize <= resident_device::arch::CPU_SMEM_BYTES) as u32),
        }
    }
}

/// The shape of a launch: grid and block (x, y, z), dynamic shared memory, and whether
/// it is cooperative or may overlap the previous kernel (programmatic dependent launch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in the grid, (x, y, z) (the CPU device takes only one-dimensional grids).
    pub grid: (u32, u32, u32),
    /// Threads per block, (x, y, z): 1 to 1024 in all.
    pub block: (u32, u32, u32),
    /// Bytes of dynamic shared memory per block (above 48 KiB the launch opts in).
    pub shared_bytes: u32,
    /// Every block co-resident, so that blocks may wait for each other (grid barriers).
    /// Refused if the grid does not fit the device at once.
    pub cooperative: bool,
    /// Programmatic dependent launch: the kernel may start while the stream's previous
    /// kernel still runs (what "graph + PDL" measures). Only for kernels that do not
    /// read what the previous one writes.
    pub programmatic: bool,
}

impl LaunchConfig {
    /// `grid` blocks of `block` threads, one-dimensional.
    pub fn new(grid: u32, block: u32) -> Self {
        Self { grid: (grid, 1, 1), block: (block, 1, 1), shared_bytes: 0, cooperative: false, programmatic: false }
    }
    /// Enough blocks of `block` threads for one thread per element.
    pub fn for_elements(n: u32, block: u32) -> Self {
        Self::new(n.div_ceil(block.max(1)).max(1), block)
    }
    /// With `bytes` of dynamic shared memory per block.
    pub fn shared_bytes(mut self, bytes: u32) -> Self {
        self.shared_bytes = bytes;
        self
    }
    /// Cooperative: every block co-resident (refused if the grid does not fit at once).
    pub fn cooperative(mut self) -> Self {
        self.cooperative = true;
        self
    }
    /// Programmatic dependent launch: may start while the stream's previous kernel runs.
    pub fn programmatic(mut self) -> Self {
        self.programmatic = true;
        self
    }
    fn threads(&self) -> u64 {
        self.block.0 as u64 * self.block.1 as u64 * self.block.2 as u64
    }
    fn blocks(&self) -> u64 {
        self.grid.0 as u64 * self.grid.1 as u64 * self.grid.2 as u64
    }
}

impl Stream {
    /// Launches `f` with `params` on this stream.
    ///
    /// # Safety
    /// Whatever the kernel does with the parameters must be valid: every address it
    /// reads or writes must lie in memory that lives until the launch has completed,
    /// and nothing else may write what it reads meanwhile (as for any CUDA kernel). A
    /// launch captured into a [`Graph`] runs again at each replay: the same must then
    /// hold for every replay.
    pub unsafe fn launch<P: Pod>(&self, f: &Function<P>, cfg: LaunchConfig, params: P) -> Result<()> {
        self.gpu.same_device(&f.module.gpu)?;
        if cfg.threads() == 0 || cfg.threads() > MAX_BLOCK_THREADS as u64 || cfg.blocks() == 0 {
            return Err(Error::Config(format!(
                "launch of `{}`: {cfg:?}: blocks of 1 to {MAX_BLOCK_THREADS} threads, at least one block",
                f.name
            )));
        }
        let (s, f_raw) = match (&self.raw, f.raw) {
            (RawStream::Cuda(s), RawKernel::Cuda(raw)) => (s, raw),
            (RawStream::Cpu(q), RawKernel::Cpu(k)) => {
                let l = cpu_launch(f, k.body, &cfg, bytemuck::bytes_of(&params).to_vec())?;
                // SAFETY: the caller vouches for the parameters, for this run and every
                // replay of a graph that captures it.
                return q.launch(Arc::new(move || unsafe { l.execute() }));
            }
            _ => return Err(Error::Config(format!("launch of `{}`: a kernel of another backend than the stream's", f.name))),
        };
        self.gpu.bind()?;
        if cfg.cooperative {
            // SAFETY: a loaded function of the bound context.
            let fit = unsafe { launch::blocks_per_sm(f_raw, cfg.threads() as u32, cfg.shared_bytes) }? as u64 * self.gpu.sm_count() as u64;
            if cfg.blocks() > fit {
                return Err(Error::Config(format!(
                    "cooperative launch of `{}`: {} blocks, {fit} fit the device at once",
                    f.name,
                    cfg.blocks()
                )));
            }
        }
        let raw = RawLaunch {
            grid: cfg.grid,
            block: cfg.block,
            shared_bytes: cfg.shared_bytes,
            cooperative: cfg.cooperative,
            programmatic: cfg.programmatic,
        };
        let mut p = params;
        // SAFETY: the context is bound; `function` checked that the kernel takes one `P`
        // (where the driver could say); the caller vouches for what `P` holds.
        unsafe { launch::launch(f_raw, s.raw(), &raw, (&raw mut p).cast(), "cuLaunchKernel") }
    }

    /// Captures what `f` enqueues on this stream (launches, copies, event records)
    /// into a [`Graph`]: nothing runs now; the graph runs it on each
    /// [`Graph::launch`]. The capture is thread-local on a GPU: other threads' work on
    /// other streams is not swept in. On the CPU device every operation enqueued on this
    /// stream while `f` runs is captured. On both, host callbacks and pinned copies (and
    /// ticket waits on the CPU) are refused while the stream captures (docs/streams.md).
    ///
    /// The capture ends whatever `f` does (an error, a panic): the stream does not go on
    /// capturing. Captures of one stream do not nest (an error); a capture of a stream
    /// that another thread captures waits for that one to end.
    pub fn capture(&self, f: impl FnOnce(&Stream) -> Result<()>) -> Result<Graph> {
        self.gpu.bind()?;
        // Held until the capture has ended (also on unwind: its drop runs after the
        // backend's own guard has ended the capture).
        let _capturing = self.capture_gate.capture()?;
        let inner = match &self.raw {
            RawStream::Cuda(s) => GraphInner::Cuda(CapturedGraph::capture(s, || f(self))?),
            RawStream::Cpu(q) => GraphInner::Cpu(q.capture_buffer().record_during(|| f(self))?),
        };
        Ok(Graph { inner, gpu: self.gpu.clone() })
    }
}

/// A CPU launch of `f`, with the checks a CPU device makes.
fn cpu_launch<P>(f: &Function<P>, body: crate::image::__CpuKernelFn, cfg: &LaunchConfig, params: Vec<u8>) -> Result<CpuLaunch> {
    let refuse = |why: String| Err(Error::Config(format!("launch of `{}` on the CPU device: {why}", f.name)));
    if cfg.grid.1 != 1 || cfg.grid.2 != 1 {
        return refuse(format!("grid {:?}: the CPU runs one-dimensional grids", cfg.grid));
    }
    if cfg.shared_bytes as usize > resident_device::arch::CPU_SMEM_BYTES {
        return refuse(format!("{} bytes of shared memory, a CPU block has {}", cfg.shared_bytes, resident_device::arch::CPU_SMEM_BYTES));
    }
    if cfg.cooperative && cfg.grid.0 > MAX_COOPERATIVE_BLOCKS {
        return refuse(format!("a cooperative grid of {} blocks, at most {MAX_COOPERATIVE_BLOCKS} (one thread each)", cfg.grid.0));
    }
    Ok(CpuLaunch { name: f.name.clone(), body, grid: cfg.grid.0, shared_bytes: cfg.shared_bytes, cooperative: cfg.cooperative, params })
}

/// A captured graph of stream work ([`Stream::capture`]): an instantiated CUDA graph,
/// or on the CPU device the recorded operations.
pub struct Graph {
    inner: GraphInner,
    gpu: Device,
}

enum GraphInner {
    Cuda(CapturedGraph),
    Cpu(Vec<Captured>),
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph").finish_non_exhaustive()
    }
}

impl Graph {
    /// Enqueues one run of the whole graph on `stream` (of the same device).
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        self.gpu.same_device(&stream.gpu)?;
        match (&self.inner, &stream.raw) {
            (GraphInner::Cuda(g), RawStream::Cuda(s)) => g.launch(s),
            (GraphInner::Cpu(ops), RawStream::Cpu(q)) => ops.iter().try_for_each(|op| q.replay(stream.on(), op)),
            _ => Err(Error::Config("a graph of another backend than the stream's".into())),
        }
    }
}

impl Device {
    /// Loads a kernel image's kernels on this device. Load modules before a `Runtime`
    /// starts its persistent kernel on the device: loading waits for the device's
    /// running kernels (a `Runtime` has its own image loaded: `Runtime::module`). On the
    /// CPU device this is a lookup of the image's kernels compiled for the host.
    pub fn load(&self, image: &KernelImage) -> Result<Module> {
        let Some(ctx) = self.cuda_context() else { return Ok(Module::cpu(image, self)) };
        self.bind()?;
        Ok(Module {
            raw: RawModule::Cuda(Arc::new(CudaModule::load(ctx, image.name(), image.built_ptx())?)),
            image: image.name(),
            gpu: self.clone(),
        })
    }

    /// The runtime's own ordinary kernels (`resident_pipeline`, `resident_spin_write`,
    /// `resident_axpy_flat`, `resident_tree_level`, `resident_tree_grow`:
    /// `KernelImage::builtin`; and `resident_one_task` over the
    /// built-in tasks), loaded with this handle.
    pub fn kernels(&self) -> Module {
        Module { raw: self.inner.kernels.clone(), image: "resident", gpu: self.clone() }
    }
}
