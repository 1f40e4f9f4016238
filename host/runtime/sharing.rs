//! Sharing the GPU with other work ([`Runtime::sharing`], docs/sharing.md): giving the
//! kernel's SMs back while idle, stepping the kernel out for driver work that waits for
//! every kernel, and the SM partition and the stream on the SMs it leaves over.

use crate::backend::Backend;
use crate::{Error, Result, Runtime, SmPartition};

/// The runtime's share of its device ([`Runtime::sharing`]): residency by hand, and the
/// SM partition.
#[derive(Clone, Copy)]
pub struct Sharing<'a> {
    rt: &'a Runtime,
}

impl Runtime {
    /// Its share of the device: [`Sharing::release`], [`Sharing::with_kernel_out`],
    /// [`Sharing::partition`], [`Sharing::rest_stream`]. The policy that does the same
    /// by itself is [`crate::RuntimeConfig::residency`]; its counters are in
    /// [`Runtime::metrics`].
    pub fn sharing(&self) -> Sharing<'_> {
        Sharing { rt: self }
    }
}

impl Sharing<'_> {
    /// Gives the GPU back now if the runtime is idle (every task submitted so far has
    /// completed): the resident kernel exits, and the next submission launches it
    /// again, with queue, buffers, lists and counters as they were (host/runtime/residency.rs).
    /// Whether it exited: false if work is pending (the completion bookkeeping of a task
    /// that has just finished included: try again) or it had exited already.
    /// [`RuntimeConfig::residency`] does this by itself after an idle time.
    pub fn release(&self) -> Result<bool> {
        self.rt.shared.release_if_idle()
    }

    /// Runs `f` with the runtime's kernel out: waits until every task submitted so far
    /// has completed, exits the kernel, and keeps every submission from relaunching it
    /// until `f` returns (they wait; the next one after relaunches it). For driver work
    /// that waits for every running kernel of the context, which beside a resident
    /// kernel would wait until it exits: the first calls of a library whose kernels
    /// load lazily (cuBLAS, cuDNN, PyTorch; CUDA loads modules lazily by default since
    /// 12.2), a module load, another library's pinned free (docs/sharing.md). A
    /// submission from `f`'s own thread is refused (`Error::Config`: it would wait for
    /// itself), as is a nested call; `f` may make and drop buffers. Refused while peer
    /// links into this runtime are open (`Error::Config`). On the CPU backend the
    /// workers leave and come back the same way.
    ///
    /// From the call on, other threads' submissions wait, so the queue drains; the
    /// call waits for that as long as it takes (a task waiting on a counter nothing
    /// will signal keeps it waiting: see [`Sharing::with_kernel_out_timeout`]). `f`
    /// must not wait for another thread's submission to this runtime (a thread it
    /// spawns and joins, a parallel iterator that submits, a `Link::flush` of a host
    /// link into this runtime): that submission waits for `f`.
    pub fn with_kernel_out<R>(&self, f: impl FnOnce() -> R) -> Result<R> {
        self.rt.shared.with_kernel_out(None, f)
    }

    /// [`Sharing::with_kernel_out`], giving up with `Error::Timeout` (nothing run, the
    /// hold given back) if the queue has not drained within `timeout`.
    pub fn with_kernel_out_timeout<R>(&self, timeout: std::time::Duration, f: impl FnOnce() -> R) -> Result<R> {
        self.rt.shared.with_kernel_out(crate::util::deadline::after(timeout), f)
    }

    /// The SM partition the runtime's kernels are confined to, or `None` when they may
    /// use the whole device (no [`crate::RuntimeConfig::sm_partition`]).
    pub fn partition(&self) -> Option<SmPartition> {
        let Backend::Cuda(c) = &*self.rt.shared.backend else { return None };
        let p = c.partition()?;
        Some(SmPartition { sms: p.runtime.sms(), rest_sms: p.rest.as_ref().map_or(0, |r| r.sms()), device_sms: p.total })
    }

    /// A stream on the SMs the runtime's partition leaves over: kernels launched on it
    /// (through this crate's stream API, or other libraries through
    /// [`crate::stream::Stream::raw`], e.g. cuBLAS's `cublasSetStream`) run on those
    /// SMs only, beside the resident blocks and never among them. `priority` as for
    /// [`crate::stream::Device::stream_with_priority`]. `Err(Config)` when the runtime has
    /// no partition, or no SMs are left over.
    pub fn rest_stream(&self, priority: i32) -> Result<crate::stream::Stream> {
        let Backend::Cuda(c) = &*self.rt.shared.backend else {
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
        crate::stream::Stream::in_green(&self.rt.shared.gpu()?, rest, priority)
    }
}
