//! Async copies: device to device on any [`Stream`]; host to device and device to host
//! only on a [`ScopedStream`], from and into pinned buffers borrowed for the scope.
//! Every copy is ordered after conflicting accesses of other streams to its device
//! ranges (see `tracker`).

use bytemuck::Pod;
use cudarc::driver::sys;

use super::device_buffer::DeviceView;
use super::pinned::{PinnedView, PinnedViewMut};
use super::scoped::ScopedStream;
use super::stream::Stream;
use super::tracker::{On, ordered};
use crate::cuda::driver::check;
use crate::{Error, Result};

fn same_len(expected: usize, got: usize) -> Result<()> {
    if expected == got { Ok(()) } else { Err(Error::LengthMismatch { expected, got }) }
}

impl Stream {
    pub(crate) fn on(&self) -> On {
        On { id: self.id, raw: self.raw() }
    }

    /// Copies `src` into `dst` on the device, in stream order. The views may be of one
    /// buffer (then they must not overlap).
    pub fn copy_d2d<'a, 'b, T: Pod + 'a + 'b>(&self, src: impl Into<DeviceView<'a, T>>, dst: impl Into<DeviceView<'b, T>>) -> Result<()> {
        let (src, dst) = (src.into(), dst.into());
        same_len(src.len(), dst.len())?;
        self.gpu.same_device(src.gpu())?;
        self.gpu.same_device(dst.gpu())?;
        let (s, d) = (src.use_(false), dst.use_(true));
        if std::ptr::eq(s.tracker, d.tracker) && s.bytes.start < d.bytes.end && d.bytes.start < s.bytes.end {
            return Err(Error::Config("copy_d2d: source and destination overlap".into()));
        }
        self.gpu.bind()?;
        ordered(self.on(), &[s, d], || {
            check(unsafe { sys::cuMemcpyDtoDAsync_v2(dst.ptr(), src.ptr(), dst.bytes(), self.raw()) }, "cuMemcpyDtoDAsync")
        })
    }
}

impl<'scope> ScopedStream<'scope> {
    /// Uploads `src` (pinned, borrowed until the scope ends) into `dst`, asynchronously.
    pub fn copy_h2d<'d, T: Pod + 'd>(&self, src: impl Into<PinnedView<'scope, T>>, dst: impl Into<DeviceView<'d, T>>) -> Result<()> {
        let (src, dst) = (src.into(), dst.into());
        same_len(dst.len(), src.len())?;
        self.gpu.same_device(dst.gpu())?;
        self.gpu.bind()?;
        ordered(self.on(), &[dst.use_(true)], || {
            check(unsafe { sys::cuMemcpyHtoDAsync_v2(dst.ptr(), src.ptr().cast(), dst.bytes(), self.raw()) }, "cuMemcpyHtoDAsync")
        })
    }

    /// Downloads `src` into `dst` (pinned, mutably borrowed until the scope ends),
    /// asynchronously: read `dst` after the scope.
    pub fn copy_d2h<'d, T: Pod + 'd>(&self, src: impl Into<DeviceView<'d, T>>, dst: impl Into<PinnedViewMut<'scope, T>>) -> Result<()> {
        let (src, dst) = (src.into(), dst.into());
        same_len(src.len(), dst.len())?;
        self.gpu.same_device(src.gpu())?;
        self.gpu.bind()?;
        ordered(self.on(), &[src.use_(false)], || {
            check(unsafe { sys::cuMemcpyDtoHAsync_v2(dst.ptr().cast(), src.ptr(), src.bytes(), self.raw()) }, "cuMemcpyDtoHAsync")
        })
    }
}
