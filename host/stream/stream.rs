//! [`Stream`]: a non-blocking CUDA stream with a priority, or a CPU stream (a thread
//! running its operations in order), and the operations on it that touch no host memory
//! (events, waits; device copies and kernels live in `copy.rs` and `kernels.rs`, host
//! callbacks in `callback.rs`, launches in `launch.rs`). Copies to and from pinned host
//! memory exist only on a [`super::ScopedStream`], whose scope keeps their host buffers
//! borrowed until the stream is synchronized.

use cudarc::driver::sys::{self, CUstream};
use std::sync::atomic::{AtomicU64, Ordering};

use super::cpu::CpuStream;
use super::device::Gpu;
use super::event::Event;
use super::raw::{RawEvent, RawStream};
use super::tracker::On;
use crate::Result;
use crate::cuda::driver::check;
use crate::cuda::stream::Stream as CudaStream;

/// The stream priorities of a device. CUDA counts backwards: `greatest` is the
/// numerically lowest value and the most urgent; `least` (0 on current GPUs) is the
/// default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priorities {
    pub least: i32,
    pub greatest: i32,
}

impl Priorities {
    /// The most urgent priority.
    pub fn high(&self) -> i32 {
        self.greatest
    }
    /// The default, least urgent priority.
    pub fn low(&self) -> i32 {
        self.least
    }
    /// `p` moved into the range, as the driver does.
    pub fn clamp(&self, p: i32) -> i32 {
        p.clamp(self.greatest, self.least)
    }
}

/// Identifies a stream for the access tracker (a handle's address may be reused).
pub(crate) fn next_stream_id() -> u64 {
    // Relaxed: a unique number, ordered with nothing.
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A stream: on a GPU, a CUDA stream created with `CU_STREAM_NON_BLOCKING` (it never
/// synchronizes with the legacy default stream); on the CPU device, a thread that runs
/// the stream's operations in order. Dropping it waits for its work (so that nothing it
/// enqueued can outlive the buffers and the module it used).
#[derive(Debug)]
pub struct Stream {
    pub(crate) raw: RawStream,
    pub(crate) id: u64,
    pub(crate) gpu: Gpu,
    priority: i32,
}

impl Stream {
    pub(crate) fn new(gpu: &Gpu, priority: i32) -> Result<Self> {
        let id = next_stream_id();
        let Some(ctx) = gpu.cuda_context() else {
            let raw = RawStream::Cpu(CpuStream::new(format!("resident-stream-{id}")));
            return Ok(Self { raw, id, gpu: gpu.clone(), priority: gpu.priorities().clamp(priority) });
        };
        gpu.bind()?;
        let raw = CudaStream::non_blocking(ctx, gpu.priorities().clamp(priority))?;
        let mut actual = 0;
        check(unsafe { sys::cuStreamGetPriority(raw.raw(), &mut actual) }, "cuStreamGetPriority")?;
        Ok(Self { raw: RawStream::Cuda(raw), id, gpu: gpu.clone(), priority: actual })
    }

    /// The priority the driver gave this stream (on the CPU device, the requested one
    /// clamped into the range; CPU streams do not apply it).
    pub fn priority(&self) -> i32 {
        self.priority
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The raw handle, for interop with other CUDA code (null for a CPU stream). Work
    /// enqueued through it is outside this API's tracking.
    pub fn raw(&self) -> CUstream {
        self.raw.cuda_handle()
    }

    /// This stream, as the access tracker knows it.
    pub(crate) fn on(&self) -> On<'_> {
        On { id: self.id, stream: &self.raw }
    }

    /// Blocks until all work enqueued so far has completed. On the CPU device an error
    /// if called from a CPU stream's thread (a host callback: it could wait for itself).
    pub fn synchronize(&self) -> Result<()> {
        self.gpu.bind()?;
        self.raw.synchronize()
    }

    /// Whether all work enqueued so far has completed (an error if some failed).
    pub fn is_idle(&self) -> Result<bool> {
        self.gpu.bind()?;
        self.raw.is_idle()
    }

    /// Records `event` here: it completes when the work enqueued so far has.
    pub fn record(&self, event: &Event) -> Result<()> {
        self.gpu.same_device(&event.gpu)?;
        self.gpu.bind()?;
        match (&self.raw, &event.raw) {
            (RawStream::Cpu(q), RawEvent::Cpu(e)) => self.cpu_record(q, e),
            _ => event.raw.record(&self.raw),
        }
    }

    /// Work enqueued here after this call starts only after `event` completes (the
    /// host does not wait). It waits for the event's latest record as of this call; an
    /// event never recorded makes no wait.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.gpu.same_device(&event.gpu)?;
        self.gpu.bind()?;
        match (&self.raw, &event.raw) {
            (RawStream::Cpu(q), RawEvent::Cpu(e)) => self.cpu_wait_event(q, e),
            _ => self.raw.wait(&event.raw),
        }
    }

    /// Work enqueued here after this call starts only after the work enqueued on
    /// `other` so far has completed (an event recorded on `other`, waited on here).
    pub fn wait_stream(&self, other: &Stream) -> Result<()> {
        self.gpu.same_device(&other.gpu)?;
        self.gpu.bind()?;
        match (&self.raw, &other.raw) {
            (RawStream::Cpu(q), RawStream::Cpu(o)) => self.cpu_wait_queue(q, o.queue()),
            _ => {
                let e = RawEvent::ordering(&other.raw)?;
                e.record(&other.raw)?;
                self.raw.wait(&e)
            }
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // A CPU stream waits in its own drop (`CpuStream`).
        if let RawStream::Cuda(s) = &self.raw
            && self.gpu.bind().is_ok()
        {
            let _ = s.synchronize();
        }
    }
}
