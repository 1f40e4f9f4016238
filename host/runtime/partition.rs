//! The runtime's SM partition as a user sees it (`RuntimeConfig::sm_partition`; the
//! green contexts behind it: host/driver/green.rs).

use crate::backend::Backend;
use crate::{Error, Result, Runtime};

/// How a runtime split its device ([`Runtime::partition`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmPartition {
    /// The SMs the runtime's kernels run on (the request, rounded up by the driver).
    pub sms: u32,
    /// The SMs left to the rest ([`Runtime::rest_stream`]); 0 when fewer remain than
    /// the driver's smallest partition (then there is no rest stream).
    pub rest_sms: u32,
    /// The device's SMs.
    pub device_sms: u32,
}

impl Runtime {
    /// The SM partition the runtime's kernels are confined to, or `None` when they may
    /// use the whole device (no [`crate::RuntimeConfig::sm_partition`]).
    pub fn partition(&self) -> Option<SmPartition> {
        let Backend::Cuda(c) = &*self.shared.backend else { return None };
        let p = c.partition()?;
        Some(SmPartition { sms: p.runtime.sms(), rest_sms: p.rest.as_ref().map_or(0, |r| r.sms()), device_sms: p.total })
    }

    /// A stream on the SMs the runtime's partition leaves over: kernels launched on it
    /// (through this crate's stream API, or other libraries through
    /// [`crate::stream::Stream::raw`], e.g. cuBLAS's `cublasSetStream`) run on those
    /// SMs only, beside the resident blocks and never among them. `priority` as for
    /// [`crate::stream::Gpu::stream_with_priority`]. `Err(Config)` when the runtime has
    /// no partition, or no SMs are left over.
    pub fn rest_stream(&self, priority: i32) -> Result<crate::stream::Stream> {
        let Backend::Cuda(c) = &*self.shared.backend else {
            return Err(Error::Config("rest_stream: the CPU backend has no SM partition".into()));
        };
        let Some(p) = c.partition() else {
            return Err(Error::Config("rest_stream: this runtime has no SM partition (RuntimeConfig::sm_partition)".into()));
        };
        let Some(rest) = &p.rest else {
            return Err(Error::Config(format!(
                "rest_stream: the partition of {} SMs leaves fewer than the driver's smallest partition",
                p.runtime.sms()
            )));
        };
        crate::stream::Stream::in_green(&self.shared.gpu()?, rest, priority)
    }
}
