//! A non-blocking CUDA stream, destroyed on drop.

use cudarc::driver::sys::{self, CUevent, CUresult, CUstream};
use std::sync::{Arc, Mutex, MutexGuard};

use super::green::GreenCtx;
use crate::Result;
use crate::driver::context::{Context, check};

/// Holds its context, so the context outlives it (dropping the last `Context` releases
/// the primary context, after which the handle would be stale).
#[derive(Debug)]
pub struct Stream {
    raw: CUstream,
    ctx: Context,
    /// Taken around every event wait enqueued here ([`Stream::wait_event`]) and around
    /// an operation that must not be captured, from its capture check to its enqueue
    /// ([`Stream::enqueue_uncaptured`]). A stream joins another stream's capture when it
    /// waits for an event recorded there; under this lock no wait can make it join
    /// between the check and the enqueue.
    joins: Mutex<()>,
    /// The green context a stream of an SM partition was made in ([`Stream::in_green`]):
    /// it must outlive the stream (dropped after it, as a field after `raw`'s destroy).
    _green: Option<Arc<GreenCtx>>,
}

// SAFETY: CUDA streams may be used from any thread.
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

/// Whether a stream's work is done, still running, or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamState {
    Idle,
    Busy,
    Failed(crate::Error),
}

impl Stream {
    /// A stream that does not synchronize with the legacy default stream.
    /// `priority`: lower numbers are higher priority (see `cuCtxGetStreamPriorityRange`).
    pub fn non_blocking(ctx: &Context, priority: i32) -> Result<Self> {
        ctx.bind()?;
        let mut raw = std::ptr::null_mut();
        check(
            // SAFETY: the context is current (bound above); the driver writes the handle.
            unsafe { sys::cuStreamCreateWithPriority(&mut raw, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32, priority) },
            "cuStreamCreateWithPriority",
        )?;
        Ok(Self { raw, ctx: ctx.clone(), joins: Mutex::new(()), _green: None })
    }

    /// A non-blocking stream of a green context: kernels launched on it run on that
    /// partition's SMs only (host/driver/green.rs).
    pub fn in_green(green: &Arc<GreenCtx>, priority: i32) -> Result<Self> {
        let ctx = green.context();
        ctx.bind()?;
        let mut raw = std::ptr::null_mut();
        check(
            // SAFETY: a live green context (held by the `Arc`); the flag is the one the
            // driver requires; it writes the handle.
            unsafe { sys::cuGreenCtxStreamCreate(&mut raw, green.raw(), sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32, priority) },
            "cuGreenCtxStreamCreate",
        )?;
        Ok(Self { raw, ctx: ctx.clone(), joins: Mutex::new(()), _green: Some(green.clone()) })
    }

    fn joins(&self) -> MutexGuard<'_, ()> {
        // It guards no data: a poisoned lock is as good.
        self.joins.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Work enqueued here from now on waits for `event`'s latest record
    /// (`cuStreamWaitEvent`, which takes an event of any context, another device's
    /// included).
    ///
    /// # Safety
    /// `event` must be a live event (of this context or another); this stream's context
    /// must be current.
    pub unsafe fn wait_event(&self, event: CUevent) -> Result<()> {
        let _joins = self.joins();
        // SAFETY: a live stream; the caller vouches for the event and the context.
        check(unsafe { sys::cuStreamWaitEvent(self.raw, event, 0) }, "cuStreamWaitEvent")
    }

    /// Enqueues what `enqueue` enqueues on this stream, unless the stream is capturing a
    /// graph (then `Err`, and nothing is enqueued): for operations that must run once
    /// (see [`Stream::refuse_capture`]). No wait enqueued through [`Stream::wait_event`]
    /// can make the stream join a capture between the check and the enqueue; a capture
    /// of this stream itself is kept out by the caller (the stream API's capture gate).
    pub fn enqueue_uncaptured(&self, what: &str, enqueue: impl FnOnce(CUstream) -> Result<()>) -> Result<()> {
        let _joins = self.joins();
        self.refuse_capture(what)?;
        enqueue(self.raw)
    }

    /// The green context this stream was made in, if any.
    pub fn green(&self) -> Option<Arc<GreenCtx>> {
        self._green.clone()
    }

    /// The context this stream belongs to.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    pub fn raw(&self) -> CUstream {
        self.raw
    }

    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: a live stream (destroyed only on drop).
        check(unsafe { sys::cuStreamSynchronize(self.raw) }, "cuStreamSynchronize")
    }

    pub fn state(&self) -> StreamState {
        // SAFETY: a live stream (destroyed only on drop).
        match unsafe { sys::cuStreamQuery(self.raw) } {
            CUresult::CUDA_SUCCESS => StreamState::Idle,
            CUresult::CUDA_ERROR_NOT_READY => StreamState::Busy,
            r => StreamState::Failed(check(r, "cuStreamQuery").unwrap_err()),
        }
    }

    /// `Err` if the stream is capturing a graph: `what` must not be captured, since a
    /// graph replays it later and again (a host callback's `FnOnce` would run twice, a
    /// copy would touch pinned memory lent only until its scope ended).
    pub fn refuse_capture(&self, what: &str) -> Result<()> {
        let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        // SAFETY: a live stream; the driver writes the status (allowed during capture).
        check(unsafe { sys::cuStreamIsCapturing(self.raw, &mut status) }, "cuStreamIsCapturing")?;
        if status == sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            Ok(())
        } else {
            Err(crate::Error::Config(format!("{what} cannot be captured into a graph")))
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        // SAFETY: owned here, used by nothing after this; work still queued on it
        // completes first (the driver defers the release).
        unsafe { sys::cuStreamDestroy_v2(self.raw) };
    }
}

/// The runtime's transfer stream: its own, or one a user lent it
/// (`RuntimeBuilder::transfer_stream`), kept alive here as an opaque owner.
pub(crate) struct Transfer {
    raw: CUstream,
    _own: Option<Stream>,
    lent: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl Transfer {
    pub fn own(s: Stream) -> Self {
        Self { raw: s.raw(), _own: Some(s), lent: None }
    }

    /// # Safety
    /// `raw` must be a stream of the runtime's context that `owner` keeps alive.
    pub unsafe fn lent(raw: CUstream, owner: Box<dyn std::any::Any + Send + Sync>) -> Self {
        Self { raw, _own: None, lent: Some(owner) }
    }

    pub fn raw(&self) -> CUstream {
        self.raw
    }

    pub fn lent_owner(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        self.lent.as_deref()
    }

    pub fn state(&self) -> StreamState {
        // SAFETY: a stream of the runtime's context, kept alive by `_own` or `lent`.
        match unsafe { sys::cuStreamQuery(self.raw) } {
            CUresult::CUDA_SUCCESS => StreamState::Idle,
            CUresult::CUDA_ERROR_NOT_READY => StreamState::Busy,
            r => StreamState::Failed(check(r, "cuStreamQuery").unwrap_err()),
        }
    }
}
