//! A CUDA event, destroyed on drop: a marker recorded into a stream, which completes
//! when the stream's work before it has completed.

use cudarc::driver::sys::{self, CUevent, CUresult, CUstream};

use crate::Result;
use crate::driver::context::check;

#[derive(Debug)]
pub struct Event {
    raw: CUevent,
}

// SAFETY: event handles may be used from any thread of their context.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}

impl Event {
    /// `timing`: whether the event records a timestamp (`cuEventElapsedTime`). Events
    /// used only for ordering are created without (`CU_EVENT_DISABLE_TIMING`), which
    /// makes recording and waiting cheaper.
    ///
    /// # Safety
    /// The context must be current.
    pub unsafe fn new(timing: bool) -> Result<Self> {
        let flags = if timing { 0 } else { sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32 };
        let mut raw = std::ptr::null_mut();
        check(unsafe { sys::cuEventCreate(&mut raw, flags) }, "cuEventCreate")?;
        Ok(Self { raw })
    }

    pub fn raw(&self) -> CUevent {
        self.raw
    }

    /// # Safety
    /// `stream` must be a live stream of this event's context, and the context current.
    pub unsafe fn record(&self, stream: CUstream) -> Result<()> {
        check(unsafe { sys::cuEventRecord(self.raw, stream) }, "cuEventRecord")
    }

    /// Whether the work before the last record has completed (true if never recorded).
    pub fn query(&self) -> Result<bool> {
        match unsafe { sys::cuEventQuery(self.raw) } {
            CUresult::CUDA_SUCCESS => Ok(true),
            CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            r => check(r, "cuEventQuery").map(|_| false),
        }
    }

    pub fn synchronize(&self) -> Result<()> {
        check(unsafe { sys::cuEventSynchronize(self.raw) }, "cuEventSynchronize")
    }

    /// Milliseconds from `start` to `self`; both must be timing events, recorded and
    /// completed.
    pub fn elapsed_ms_since(&self, start: &Event) -> Result<f32> {
        let mut ms = 0f32;
        check(unsafe { sys::cuEventElapsedTime_v2(&mut ms, start.raw, self.raw) }, "cuEventElapsedTime")?;
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // An event still pending in a stream may be destroyed: the driver releases it
        // once it completes.
        unsafe { sys::cuEventDestroy_v2(self.raw) };
    }
}
