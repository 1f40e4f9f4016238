//! [`Device`]: one device, CUDA or the CPU, with its built-in kernels and an internal
//! stream for allocation, frees and synchronous host transfers. Everything else in
//! [`crate::stream`] is created from a `Device` and keeps it alive.

use cudarc::driver::sys::{self, CUstream};
use std::sync::Arc;

use super::cpu::{CpuModule, CpuStream};
use super::priorities::{Priorities, next_stream_id};
use super::raw::{RawKernel, RawModule, RawStream};
use crate::driver::context::{Context, check};
use crate::driver::module::Module as CudaModule;
use crate::driver::stream::Stream as CudaStream;
use crate::{Error, KernelImage, Result};

/// The priority range a CPU device reports: accepted and recorded, not applied (a CPU
/// stream is a thread of ordinary priority).
const CPU_PRIORITIES: Priorities = Priorities { least: 0, greatest: -1 };

/// A handle to one device: a CUDA GPU ([`Device::first`], [`Device::new`]) or the CPU
/// ([`Device::cpu`]), on which the same API runs its streams as threads and its kernels
/// compiled for the host (docs/streams.md, "The CPU device"). Cheap to clone (one
/// `Arc`).
#[derive(Clone, Debug)]
pub struct Device {
    pub(crate) inner: Arc<DeviceInner>,
}

#[derive(Debug)]
pub(crate) struct DeviceInner {
    pub(crate) pipeline: RawKernel,
    pub(crate) spin_write: RawKernel,
    /// Allocation, frees and the synchronous `to_vec`/`copy_from_slice` go here, ordered
    /// after the buffer's earlier uses by events (see `tracker`).
    pub(crate) internal: RawStream,
    pub(crate) internal_id: u64,
    pub(crate) sm_count: u32,
    pub(crate) priorities: Priorities,
    /// The runtime's own ordinary kernels (`KernelImage::builtin`); `pipeline` and
    /// `spin_write` belong to it.
    pub(crate) kernels: RawModule,
    // Dropped last (the stream and the module hold clones too).
    pub(crate) device: Backing,
    /// A runtime's handle (`Runtime::device`) keeps that runtime's claim on the device
    /// until the module above is unloaded (`Context::claim_runtime`).
    pub(crate) _claim: Option<Arc<crate::driver::context::RuntimeClaim>>,
}

#[derive(Debug)]
pub(crate) enum Backing {
    Cuda(Context),
    Cpu,
}

// SAFETY: the CUDA function handles belong to the module, usable from any thread of the
// context; the rest is Send + Sync already.
unsafe impl Send for DeviceInner {}
unsafe impl Sync for DeviceInner {}

impl Device {
    /// The CUDA device with this ordinal. Needs the driver, a device and the embedded
    /// PTX (`crate::cuda_available()` says whether all three are there).
    pub fn new(ordinal: usize) -> Result<Self> {
        let ctx = Context::new(ordinal)?;
        ctx.check_no_runtime()?;
        ctx.bind()?;
        let builtin = KernelImage::builtin();
        let module = Arc::new(CudaModule::load(&ctx, builtin.name(), builtin.built_ptx())?);
        Self::with_module(ctx, module, None)
    }

    /// A handle on `ctx`'s device whose built-in kernels come from `module` (the
    /// runtime's, when it runs the built-in image: loaded once).
    pub(crate) fn with_module(
        ctx: Context,
        module: Arc<CudaModule>,
        claim: Option<Arc<crate::driver::context::RuntimeClaim>>,
    ) -> Result<Self> {
        ctx.bind()?;
        let pipeline = RawKernel::Cuda(module.function("resident_pipeline")?);
        let spin_write = RawKernel::Cuda(module.function("resident_spin_write")?);
        let (mut least, mut greatest) = (0, 0);
        // SAFETY: `ctx` is current (bound above); the driver writes two i32s.
        check(unsafe { sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest) }, "cuCtxGetStreamPriorityRange")?;
        let sm_count = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let internal = RawStream::Cuda(CudaStream::non_blocking(&ctx, least)?);
        Ok(Self {
            inner: Arc::new(DeviceInner {
                pipeline,
                spin_write,
                internal,
                internal_id: next_stream_id(),
                sm_count,
                priorities: Priorities { least, greatest },
                kernels: RawModule::Cuda(module),
                device: Backing::Cuda(ctx),
                _claim: claim,
            }),
        })
    }

    /// CUDA device 0.
    pub fn first() -> Result<Self> {
        Self::new(0)
    }

    /// The CPU device: streams are threads, device memory is host memory, kernels run
    /// their host build (the image's kernels compiled for the host). Always available;
    /// each call is a device of its own (its streams, buffers and events do not mix
    /// with another handle's, as two `Device::new(0)` handles do not).
    ///
    /// ```
    /// # fn main() -> resident::Result<()> {
    /// use resident::stream::Device;
    /// let gpu = Device::cpu();
    /// let x = gpu.alloc_from(&[1.0f32, 2.0, 3.0])?;
    /// let s = gpu.stream()?;
    /// s.pipeline(x.view(), x.view(), 0)?;     // 0 iterations: a copy in place
    /// assert_eq!(x.to_vec()?, [1.0, 2.0, 3.0]);
    /// # Ok(()) }
    /// ```
    pub fn cpu() -> Self {
        let kernels = Arc::new(CpuModule::new(&KernelImage::builtin()));
        // The built-in image always holds both: `host/build.rs` names them.
        let kernel = |name| kernels.function(name).map(RawKernel::Cpu);
        let (pipeline, spin_write) = (kernel("resident_pipeline"), kernel("resident_spin_write"));
        let internal_id = next_stream_id();
        Self {
            inner: Arc::new(DeviceInner {
                pipeline: pipeline.expect("the built-in image holds resident_pipeline"),
                spin_write: spin_write.expect("the built-in image holds resident_spin_write"),
                internal: RawStream::Cpu(CpuStream::new(format!("resident-stream-{internal_id}"))),
                internal_id,
                sm_count: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
                priorities: CPU_PRIORITIES,
                kernels: RawModule::Cpu(kernels),
                device: Backing::Cpu,
                _claim: None,
            }),
        }
    }

    /// CUDA device 0 if this process can use it (a driver, a device, and PTX in the
    /// runtime's image: [`crate::cuda_available`]), else the CPU device.
    pub fn auto() -> Result<Self> {
        if KernelImage::builtin().has_ptx() && crate::driver::context::gpu_present() { Self::first() } else { Ok(Self::cpu()) }
    }

    /// Whether this is the CPU device.
    pub fn is_cpu(&self) -> bool {
        matches!(self.inner.device, Backing::Cpu)
    }

    /// The device's name; "CPU" for the CPU device.
    pub fn name(&self) -> String {
        match &self.inner.device {
            Backing::Cuda(ctx) => ctx.name(),
            Backing::Cpu => "CPU".into(),
        }
    }

    /// Streaming multiprocessors; on the CPU device, the cores this process may use.
    pub fn sm_count(&self) -> u32 {
        self.inner.sm_count
    }

    /// The stream priorities this device supports (`cuCtxGetStreamPriorityRange`). The
    /// CPU device reports least 0, greatest -1, and its streams ignore them.
    pub fn priorities(&self) -> Priorities {
        self.inner.priorities
    }

    /// Free and total device memory in bytes (`cuMemGetInfo`); `None` on the CPU device,
    /// or if the driver cannot say (after a fault).
    pub fn memory_info(&self) -> Option<(usize, usize)> {
        match &self.inner.device {
            Backing::Cuda(ctx) => ctx.memory_info().ok(),
            Backing::Cpu => None,
        }
    }

    /// Makes the CUDA context current on this thread (every entry point does this
    /// first); nothing on the CPU device.
    pub(crate) fn bind(&self) -> Result<()> {
        match &self.inner.device {
            Backing::Cuda(ctx) => ctx.bind(),
            Backing::Cpu => Ok(()),
        }
    }

    /// The CUDA context, if this is a CUDA device.
    pub(crate) fn cuda_context(&self) -> Option<&Context> {
        match &self.inner.device {
            Backing::Cuda(ctx) => Some(ctx),
            Backing::Cpu => None,
        }
    }

    /// The internal stream's CUDA handle, if this is a CUDA device.
    pub(crate) fn cuda_internal(&self) -> Option<CUstream> {
        match &self.inner.internal {
            RawStream::Cuda(s) => Some(s.raw()),
            RawStream::Cpu(_) => None,
        }
    }

    /// Whether `other` is a handle of the same device: the same handle, or (CUDA) one of
    /// the same ordinal, whose primary context every handle of that device shares, so
    /// that streams, events, buffers and modules of one handle work with another's. A
    /// CPU device is its handle's own (`Device::cpu` makes a new one each time). Across
    /// devices: [`Error::ForeignHandle`].
    pub(crate) fn same_device(&self, other: &Device) -> Result<()> {
        let same = Arc::ptr_eq(&self.inner, &other.inner)
            || matches!((&self.inner.device, &other.inner.device), (Backing::Cuda(a), Backing::Cuda(b)) if a.ordinal() == b.ordinal());
        if same { Ok(()) } else { Err(Error::ForeignHandle("stream, event, buffer or kernel of another device")) }
    }
}

impl Device {
    /// Whether a stream of this device may wait for `other`'s events and streams: the
    /// same device; two CUDA devices (`cuStreamWaitEvent` takes another context's
    /// event); two CPU devices (their markers are host memory). A CUDA stream and a CPU
    /// device's event cannot order each other: [`Error::ForeignHandle`].
    pub(crate) fn may_wait_on(&self, other: &Device) -> Result<()> {
        match (&self.inner.device, &other.inner.device) {
            (Backing::Cuda(_), Backing::Cuda(_)) | (Backing::Cpu, Backing::Cpu) => Ok(()),
            _ => Err(Error::ForeignHandle("event or stream of a device of another kind (CUDA and CPU)")),
        }
    }
}

impl Drop for DeviceInner {
    fn drop(&mut self) {
        // Every Stream synchronizes when dropped and holds this Device, so only the internal
        // stream (pending frees) can still have work: finish it before the module goes.
        // (A CPU internal stream finishes its queue in its own drop.)
        if let Backing::Cuda(ctx) = &self.device
            && ctx.bind().is_ok()
        {
            let _ = self.internal.synchronize();
        }
    }
}
