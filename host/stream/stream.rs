//! [`Stream`]: a non-blocking CUDA stream with a priority, or a CPU stream (a thread
//! running its operations in order), and the operations on it that touch no host memory
//! (events, waits; device copies and kernels live in `copy.rs` and `kernels.rs`, host
//! callbacks in `callback.rs`, launches in `launch.rs`). Copies to and from pinned host
//! memory exist only on a [`super::ScopedStream`], whose scope keeps their host buffers
//! borrowed until the stream is synchronized.

use cudarc::driver::sys::{self, CUresult, CUstream};
use std::time::Duration;

use super::capture_gate::CaptureGate;
use super::cpu::CpuStream;
use super::device::Device;
use super::event::Event;
use super::priorities::next_stream_id;
use super::raw::{RawEvent, RawStream};
use super::tracker::On;
use crate::driver::context::check;
use crate::driver::stream::Stream as CudaStream;
use crate::{Error, Result};

/// A stream: on a GPU, a CUDA stream created with `CU_STREAM_NON_BLOCKING` (it never
/// synchronizes with the legacy default stream); on the CPU device, a thread that runs
/// the stream's operations in order. Dropping it waits for its work (so that nothing it
/// enqueued can outlive the buffers and the module it used).
#[derive(Debug)]
pub struct Stream {
    pub(crate) raw: RawStream,
    pub(crate) id: u64,
    pub(crate) gpu: Device,
    /// Held by `capture` for the whole capture, and by once-only operations from their
    /// capture check to their enqueue (see `capture_gate`).
    pub(crate) capture_gate: CaptureGate,
    priority: i32,
}

impl Stream {
    pub(crate) fn new(gpu: &Device, priority: i32) -> Result<Self> {
        let id = next_stream_id();
        let Some(ctx) = gpu.cuda_context() else {
            let raw = RawStream::Cpu(CpuStream::new(format!("resident-stream-{id}")));
            let priority = gpu.priorities().clamp(priority);
            return Ok(Self { raw, id, gpu: gpu.clone(), capture_gate: CaptureGate::default(), priority });
        };
        gpu.bind()?;
        let raw = CudaStream::non_blocking(ctx, gpu.priorities().clamp(priority))?;
        let mut actual = 0;
        // SAFETY: a live stream of the context bound above; the driver writes one i32.
        check(unsafe { sys::cuStreamGetPriority(raw.raw(), &mut actual) }, "cuStreamGetPriority")?;
        Ok(Self { raw: RawStream::Cuda(raw), id, gpu: gpu.clone(), capture_gate: CaptureGate::default(), priority: actual })
    }

    /// A stream of `gpu` made in a green context (an SM partition): its kernels run on
    /// that partition's SMs only.
    pub(crate) fn in_green(gpu: &Device, green: &std::sync::Arc<crate::driver::green::GreenCtx>, priority: i32) -> Result<Self> {
        let id = next_stream_id();
        gpu.bind()?;
        let raw = CudaStream::in_green(green, gpu.priorities().clamp(priority))?;
        let mut actual = 0;
        // SAFETY: a live stream made just now; the driver writes one i32.
        check(unsafe { sys::cuStreamGetPriority(raw.raw(), &mut actual) }, "cuStreamGetPriority")?;
        Ok(Self { raw: RawStream::Cuda(raw), id, gpu: gpu.clone(), capture_gate: CaptureGate::default(), priority: actual })
    }

    /// The priority the driver gave this stream (on the CPU device, the requested one
    /// clamped into the range; CPU streams do not apply it).
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// The device this stream belongs to.
    pub fn device(&self) -> &Device {
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

    /// [`Stream::synchronize`] for a scope's end, whose borrows may end only once the
    /// stream's work is complete or has failed: an error it returns is a failure of the
    /// stream's work, never one of a capture. On a GPU a synchronize of a capturing
    /// stream fails at once, without waiting; so this waits for a capture of this
    /// `Stream` by another thread to end and keeps a new one from starting meanwhile
    /// (the capture gate), and if the stream still reports a capture (it joined one of
    /// another stream, by waiting for an event recorded there), waits for that capture to
    /// end and synchronizes again. On the CPU device a synchronize waits whatever the
    /// stream records (a capture records instead of enqueueing; what was enqueued runs).
    pub(crate) fn synchronize_settled(&self) -> Result<()> {
        if let RawStream::Cpu(_) = self.raw {
            return self.synchronize();
        }
        let mut pause = Duration::from_micros(50);
        loop {
            let held = self.capture_gate.settle()?;
            let r = self.synchronize();
            drop(held);
            match r {
                Err(e) if is_capture_error(&e) => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(10));
                }
                r => return r,
            }
        }
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
            (RawStream::Cpu(q), RawEvent::Cpu(e)) => q.record_event(e),
            _ => event.raw.record(&self.raw),
        }
    }

    /// Work enqueued here after this call starts only after `event` completes (the
    /// host does not wait). It waits for the event's latest record as of this call; an
    /// event never recorded makes no wait. The event may be another device's (two CUDA
    /// devices, or two CPU devices; not one of each: `ForeignHandle`).
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.gpu.may_wait_on(&event.gpu)?;
        self.gpu.bind()?;
        match (&self.raw, &event.raw) {
            (RawStream::Cpu(q), RawEvent::Cpu(e)) => q.wait_event(e),
            _ => self.raw.wait(&event.raw),
        }
    }

    /// Work enqueued here after this call starts only after the work enqueued on
    /// `other` so far has completed (an event recorded on `other`, waited on here).
    /// `other` may be another device's stream, as for [`Stream::wait_event`].
    pub fn wait_stream(&self, other: &Stream) -> Result<()> {
        self.gpu.may_wait_on(&other.gpu)?;
        match (&self.raw, &other.raw) {
            (RawStream::Cpu(q), RawStream::Cpu(o)) => q.wait_queue(o.queue()),
            _ => {
                // The event is made and recorded in `other`'s context, waited on in ours.
                other.gpu.bind()?;
                let e = RawEvent::ordering(&other.raw)?;
                e.record(&other.raw)?;
                self.gpu.bind()?;
                self.raw.wait(&e)
            }
        }
    }
}

/// Whether `e` is the driver's refusal of a call on a capturing stream (a capture
/// error, which is not sticky and says nothing of the stream's work).
fn is_capture_error(e: &Error) -> bool {
    const CAPTURE_ERRORS: [CUresult; 9] = [
        CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
        CUresult::CUDA_ERROR_STREAM_CAPTURE_MERGE,
        CUresult::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
        CUresult::CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
        CUresult::CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
        CUresult::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
        CUresult::CUDA_ERROR_CAPTURED_EVENT,
        CUresult::CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
    ];
    matches!(e, Error::Driver { code, .. } if CAPTURE_ERRORS.iter().any(|&c| c as u32 == *code))
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

impl Device {
    /// A new non-blocking stream of the lowest (default) priority.
    pub fn stream(&self) -> Result<Stream> {
        Stream::new(self, self.inner.priorities.least)
    }

    /// A new non-blocking stream; `priority` is clamped into [`Device::priorities`]
    /// (lower numbers run first).
    pub fn stream_with_priority(&self, priority: i32) -> Result<Stream> {
        Stream::new(self, priority)
    }
}
