//! [`Gpu`]: one device's context, the embedded kernels, and an internal stream for
//! allocation, frees and synchronous host transfers. Everything else in
//! [`crate::stream`] is created from a `Gpu` and keeps it alive.

use cudarc::driver::sys::{self, CUfunction};
use std::sync::Arc;

use super::stream::{Priorities, Stream, next_stream_id};
use crate::cuda::driver::{Context, check};
use crate::cuda::module::Module;
use crate::cuda::stream::Stream as RawStream;
use crate::{Error, Result};

/// A handle to one CUDA device. Cheap to clone (one `Arc`).
#[derive(Clone, Debug)]
pub struct Gpu {
    pub(crate) inner: Arc<GpuInner>,
}

#[derive(Debug)]
pub(crate) struct GpuInner {
    pub(crate) pipeline: CUfunction,
    pub(crate) spin_write: CUfunction,
    /// Allocation, frees and the synchronous `to_vec`/`copy_from_slice` go here, ordered
    /// after the buffer's earlier uses by events (see `tracker`).
    pub(crate) internal: RawStream,
    pub(crate) internal_id: u64,
    pub(crate) sm_count: u32,
    pub(crate) priorities: Priorities,
    /// The runtime's own ordinary kernels (`KernelImage::builtin`); `pipeline` and
    /// `spin_write` belong to it.
    pub(crate) kernels: Arc<Module>,
    // Dropped last (the stream and the module hold clones too).
    pub(crate) ctx: Context,
}

// SAFETY: the function handles belong to the module, usable from any thread of the
// context; the rest is Send + Sync already.
unsafe impl Send for GpuInner {}
unsafe impl Sync for GpuInner {}

impl Gpu {
    /// The device with this ordinal. Needs the driver, a device and the embedded PTX
    /// (`crate::cuda_available()` says whether all three are there).
    pub fn new(ordinal: usize) -> Result<Self> {
        let ctx = Context::new(ordinal)?;
        ctx.bind()?;
        let module = Arc::new(Module::load(&ctx, &crate::KernelImage::builtin())?);
        Self::with_module(ctx, module)
    }

    /// A handle on `ctx`'s device whose built-in kernels come from `module` (the
    /// runtime's, when it runs the built-in image: loaded once).
    pub(crate) fn with_module(ctx: Context, module: Arc<Module>) -> Result<Self> {
        ctx.bind()?;
        let pipeline = module.function("resident_pipeline")?;
        let spin_write = module.function("resident_spin_write")?;
        let (mut least, mut greatest) = (0, 0);
        check(unsafe { sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest) }, "cuCtxGetStreamPriorityRange")?;
        let sm_count = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let internal = RawStream::non_blocking(&ctx, least)?;
        Ok(Self {
            inner: Arc::new(GpuInner {
                pipeline,
                spin_write,
                internal,
                internal_id: next_stream_id(),
                sm_count,
                priorities: Priorities { least, greatest },
                kernels: module,
                ctx,
            }),
        })
    }

    /// Device 0.
    pub fn first() -> Result<Self> {
        Self::new(0)
    }

    pub fn name(&self) -> String {
        self.inner.ctx.name()
    }

    pub fn sm_count(&self) -> u32 {
        self.inner.sm_count
    }

    /// The stream priorities this device supports (`cuCtxGetStreamPriorityRange`).
    pub fn priorities(&self) -> Priorities {
        self.inner.priorities
    }

    /// A new non-blocking stream of the lowest (default) priority.
    pub fn stream(&self) -> Result<Stream> {
        Stream::new(self, self.inner.priorities.least)
    }

    /// A new non-blocking stream; `priority` is clamped into [`Gpu::priorities`]
    /// (lower numbers run first).
    pub fn stream_with_priority(&self, priority: i32) -> Result<Stream> {
        Stream::new(self, priority)
    }

    /// Makes the context current on this thread (every entry point does this first).
    pub(crate) fn bind(&self) -> Result<()> {
        self.inner.ctx.bind()
    }

    pub(crate) fn same_device(&self, other: &Gpu) -> Result<()> {
        if Arc::ptr_eq(&self.inner, &other.inner) {
            Ok(())
        } else {
            Err(Error::Config("a stream, event or buffer of another Gpu handle was used".into()))
        }
    }
}

impl Drop for GpuInner {
    fn drop(&mut self) {
        // Every Stream synchronizes when dropped and holds this Gpu, so only the internal
        // stream (pending frees) can still have work: finish it before the module goes.
        if self.ctx.bind().is_ok() {
            let _ = self.internal.synchronize();
        }
    }
}
