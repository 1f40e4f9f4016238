//! Async copies: device to device on any [`Stream`]; host to device and device to host
//! only on a [`ScopedStream`], from and into pinned buffers borrowed for the scope.
//! Every copy is ordered after conflicting accesses of other streams to its device
//! ranges (see `tracker`). On the CPU device a copy is a memcpy run by the stream's
//! thread.

use bytemuck::Pod;
use cudarc::driver::sys;
use std::sync::Arc;

use super::device_buffer::DeviceView;
use super::pinned::{PinnedView, PinnedViewMut};
use super::raw::RawStream;
use super::scoped::ScopedStream;
use super::stream::Stream;
use super::tracker::ordered;
use crate::driver::context::check;
use crate::{Error, Result};

fn same_len(expected: usize, got: usize) -> Result<()> {
    if expected == got { Ok(()) } else { Err(Error::LengthMismatch { expected, got }) }
}

/// A memcpy of `bytes` between host addresses, as a CPU stream runs it.
///
/// # Safety
/// Both ranges must be valid and not overlap, and nothing else may write them (or read
/// the destination) meanwhile: what the tracker's waits and the scope's borrows ensure.
/// (The tracker's waits are waits for marks, and completing a mark publishes the earlier
/// operations' writes to the waiting stream: see `Mark::complete`.)
unsafe fn memcpy(src: u64, dst: u64, bytes: usize) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, bytes) };
    Ok(())
}

impl Stream {
    /// Copies `src` into `dst` on the device, in stream order. The views may be of one
    /// buffer (then they must not overlap).
    pub fn copy_d2d<'a, 'b, T: Pod + 'a + 'b>(&self, src: impl Into<DeviceView<'a, T>>, dst: impl Into<DeviceView<'b, T>>) -> Result<()> {
        let (src, dst) = (src.into(), dst.into());
        same_len(src.len(), dst.len())?;
        self.gpu.same_device(src.gpu())?;
        self.gpu.same_device(dst.gpu())?;
        let (s, d) = (src.use_(false), dst.use_(true));
        if Arc::ptr_eq(s.mem, d.mem) && s.bytes.start < d.bytes.end && d.bytes.start < s.bytes.end {
            return Err(Error::Config("copy_d2d: source and destination overlap".into()));
        }
        self.gpu.bind()?;
        let (from, to, bytes) = (src.ptr(), dst.ptr(), dst.bytes());
        match &self.raw {
            RawStream::Cuda(st) => ordered(self.on(), &[s, d], || {
                // SAFETY: both ranges lie in live device buffers of this context (bound
                // above), borrowed while the copy is enqueued and freed only after it.
                check(unsafe { sys::cuMemcpyDtoDAsync_v2(to, from, bytes, st.raw()) }, "cuMemcpyDtoDAsync")
            }),
            // SAFETY: both ranges lie in allocations the operation holds; they do not
            // overlap (checked above); the tracker orders other streams' accesses.
            RawStream::Cpu(q) => q.tracked(self.on(), &[s, d], Arc::new(move || unsafe { memcpy(from, to, bytes) })),
        }
    }
}

impl<'scope> ScopedStream<'scope> {
    /// Uploads `src` (pinned, borrowed until the scope ends) into `dst`, asynchronously.
    pub fn copy_h2d<'d, T: Pod + 'd>(&self, src: impl Into<PinnedView<'scope, T>>, dst: impl Into<DeviceView<'d, T>>) -> Result<()> {
        let (src, dst) = (src.into(), dst.into());
        same_len(dst.len(), src.len())?;
        self.gpu.same_device(dst.gpu())?;
        self.gpu.bind()?;
        let (from, to, bytes) = (src.ptr() as u64, dst.ptr(), dst.bytes());
        // No capture of this stream begins until the copy is enqueued (or refused).
        let _once = self.capture_gate.once("copy_h2d")?;
        match &self.raw {
            RawStream::Cuda(st) => ordered(self.on(), &[dst.use_(true)], || {
                // Checked after the tracker's waits, right before the enqueue, with no
                // wait in between: a wait for an event recorded in another stream's
                // capture makes this stream join that capture.
                st.enqueue_uncaptured("copy_h2d", |raw| {
                    // SAFETY: the pinned source is borrowed until the scope has
                    // synchronized this stream; the destination is a live device range.
                    check(unsafe { sys::cuMemcpyHtoDAsync_v2(to, from as *const _, bytes, raw) }, "cuMemcpyHtoDAsync")
                })
            }),
            // SAFETY: the pinned source is borrowed until the scope has synchronized this
            // stream; the destination's allocation is held by the operation.
            RawStream::Cpu(q) => q.run_tracked(self.on(), &[dst.use_(true)], move || unsafe { memcpy(from, to, bytes) }),
        }
    }

    /// Downloads `src` into `dst` (pinned, mutably borrowed until the scope ends),
    /// asynchronously: read `dst` after the scope.
    pub fn copy_d2h<'d, T: Pod + 'd>(&self, src: impl Into<DeviceView<'d, T>>, dst: impl Into<PinnedViewMut<'scope, T>>) -> Result<()> {
        let (src, dst) = (src.into(), dst.into());
        same_len(src.len(), dst.len())?;
        self.gpu.same_device(src.gpu())?;
        self.gpu.bind()?;
        let (from, to, bytes) = (src.ptr(), dst.ptr() as u64, src.bytes());
        // As in `copy_h2d`.
        let _once = self.capture_gate.once("copy_d2h")?;
        match &self.raw {
            RawStream::Cuda(st) => ordered(self.on(), &[src.use_(false)], || {
                st.enqueue_uncaptured("copy_d2h", |raw| {
                    // SAFETY: the pinned destination is mutably borrowed until the scope
                    // has synchronized this stream; the source is a live device range.
                    check(unsafe { sys::cuMemcpyDtoHAsync_v2(to as *mut _, from, bytes, raw) }, "cuMemcpyDtoHAsync")
                })
            }),
            // SAFETY: the pinned destination is mutably borrowed until the scope has
            // synchronized this stream; the source's allocation is held by the operation.
            RawStream::Cpu(q) => q.run_tracked(self.on(), &[src.use_(false)], move || unsafe { memcpy(from, to, bytes) }),
        }
    }
}
