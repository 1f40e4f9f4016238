//! [`Stream`]: a non-blocking CUDA stream with a priority, and the operations on it that
//! touch no host memory (events, waits; device copies and kernels live in `copy.rs` and
//! `kernels.rs`, host callbacks in `callback.rs`). Copies to and from pinned host memory
//! exist only on a [`super::ScopedStream`], whose scope keeps their host buffers
//! borrowed until the stream is synchronized.

use cudarc::driver::sys::{self, CUstream};
use std::sync::atomic::{AtomicU64, Ordering};

use super::device::Gpu;
use super::event::Event;
use crate::Result;
use crate::cuda::driver::check;
use crate::cuda::event::Event as RawEvent;
use crate::cuda::stream::{Stream as RawStream, StreamState};

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
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A CUDA stream created with `CU_STREAM_NON_BLOCKING`: it never synchronizes with the
/// legacy default stream. Dropping it waits for its work (so that nothing it enqueued
/// can outlive the buffers and the module it used).
#[derive(Debug)]
pub struct Stream {
    raw: RawStream,
    pub(crate) id: u64,
    pub(crate) gpu: Gpu,
    priority: i32,
}

impl Stream {
    pub(crate) fn new(gpu: &Gpu, priority: i32) -> Result<Self> {
        gpu.bind()?;
        let raw = RawStream::non_blocking(&gpu.inner.ctx, gpu.priorities().clamp(priority))?;
        let mut actual = 0;
        check(unsafe { sys::cuStreamGetPriority(raw.raw(), &mut actual) }, "cuStreamGetPriority")?;
        Ok(Self { raw, id: next_stream_id(), gpu: gpu.clone(), priority: actual })
    }

    /// The priority the driver gave this stream.
    pub fn priority(&self) -> i32 {
        self.priority
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The raw handle, for interop with other CUDA code. Work enqueued through it is
    /// outside this API's tracking.
    pub fn raw(&self) -> CUstream {
        self.raw.raw()
    }

    pub(crate) fn raw_stream(&self) -> &RawStream {
        &self.raw
    }

    /// Blocks until all work enqueued so far has completed.
    pub fn synchronize(&self) -> Result<()> {
        self.gpu.bind()?;
        self.raw.synchronize()
    }

    /// Whether all work enqueued so far has completed (an error if some failed).
    pub fn is_idle(&self) -> Result<bool> {
        self.gpu.bind()?;
        match self.raw.state() {
            StreamState::Idle => Ok(true),
            StreamState::Busy => Ok(false),
            StreamState::Failed(e) => Err(e),
        }
    }

    /// Records `event` here: it completes when the work enqueued so far has.
    pub fn record(&self, event: &Event) -> Result<()> {
        self.gpu.same_device(&event.gpu)?;
        self.gpu.bind()?;
        unsafe { event.raw.record(self.raw()) }
    }

    /// Work enqueued here after this call starts only after `event` completes (the
    /// host does not wait).
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.gpu.same_device(&event.gpu)?;
        self.gpu.bind()?;
        self.wait_raw(&event.raw)
    }

    /// Work enqueued here after this call starts only after the work enqueued on
    /// `other` so far has completed (an event recorded on `other`, waited on here).
    pub fn wait_stream(&self, other: &Stream) -> Result<()> {
        self.gpu.same_device(&other.gpu)?;
        self.gpu.bind()?;
        let e = unsafe { RawEvent::new(false)? };
        unsafe { e.record(other.raw())? };
        self.wait_raw(&e)
    }

    pub(crate) fn wait_raw(&self, e: &RawEvent) -> Result<()> {
        check(unsafe { sys::cuStreamWaitEvent(self.raw(), e.raw(), 0) }, "cuStreamWaitEvent")
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.gpu.bind().is_ok() {
            let _ = self.raw.synchronize();
        }
    }
}
