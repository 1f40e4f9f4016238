//! The backend switch of the stream API: every handle the public types hold is a CUDA
//! driver object (`crate::driver`) or its CPU stand-in (`super::cpu`). The methods here
//! are the operations both backends share, without the public checks (same device,
//! capture): the access tracker, scopes and the public types build on them.
//!
//! CUDA methods expect the context to be current (the public entry points bind it).

use cudarc::driver::sys::{CUfunction, CUstream};
use std::sync::Arc;

use super::cpu::{CpuEvent, CpuKernel, CpuModule, CpuStream, Op, QueueState};
use crate::driver::event::Event as CudaEvent;
use crate::driver::module::Module as CudaModule;
use crate::driver::stream::{Stream as CudaStream, StreamState};
use crate::{Error, Result};

#[derive(Debug)]
pub(crate) enum RawStream {
    Cuda(CudaStream),
    Cpu(CpuStream),
}

#[derive(Debug)]
pub(crate) enum RawEvent {
    Cuda(CudaEvent),
    /// Shared with captured graphs that record or wait for it.
    Cpu(Arc<CpuEvent>),
}

/// A loaded kernel image: a CUDA module or the image's host kernel table.
#[derive(Clone, Debug)]
pub(crate) enum RawModule {
    Cuda(Arc<CudaModule>),
    Cpu(Arc<CpuModule>),
}

/// A kernel of a [`RawModule`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum RawKernel {
    Cuda(CUfunction),
    Cpu(CpuKernel),
}

fn mixed() -> Error {
    Error::Config("a CUDA stream or event was used with a CPU one".into())
}

impl RawStream {
    /// The CUDA handle (null for a CPU stream).
    pub fn cuda_handle(&self) -> CUstream {
        match self {
            RawStream::Cuda(s) => s.raw(),
            RawStream::Cpu(_) => std::ptr::null_mut(),
        }
    }

    pub fn synchronize(&self) -> Result<()> {
        match self {
            RawStream::Cuda(s) => s.synchronize(),
            RawStream::Cpu(q) => q.synchronize(),
        }
    }

    /// Whether all work enqueued so far has completed; the stream's error if it failed.
    pub fn is_idle(&self) -> Result<bool> {
        match self {
            RawStream::Cuda(s) => match s.state() {
                StreamState::Idle => Ok(true),
                StreamState::Busy => Ok(false),
                StreamState::Failed(e) => Err(e),
            },
            RawStream::Cpu(q) => match q.state() {
                QueueState::Idle => Ok(true),
                QueueState::Busy => Ok(false),
                QueueState::Failed(e) => Err(e),
            },
        }
    }

    /// Work enqueued here from now on waits for `e`'s latest record (none: no wait).
    pub fn wait(&self, e: &RawEvent) -> Result<()> {
        match (self, e) {
            // SAFETY: a live event (of this device's context or another's: the driver
            // takes either); the caller made the stream's context current.
            (RawStream::Cuda(s), RawEvent::Cuda(e)) => unsafe { s.wait_event(e.raw()) },
            (RawStream::Cpu(q), RawEvent::Cpu(e)) => match e.latest() {
                Some(m) if !m.is_complete() => q.submit(Op::Wait(m)),
                _ => Ok(()),
            },
            _ => Err(mixed()),
        }
    }
}

impl RawEvent {
    /// An event for ordering on `stream`'s backend (no timing on CUDA: cheaper).
    pub fn ordering(stream: &RawStream) -> Result<Self> {
        match stream {
            // SAFETY: the caller made the context current.
            RawStream::Cuda(_) => Ok(RawEvent::Cuda(unsafe { CudaEvent::new(false)? })),
            RawStream::Cpu(_) => Ok(RawEvent::Cpu(CpuEvent::new())),
        }
    }

    /// Records the event on `stream`: it completes when the work enqueued so far has.
    pub fn record(&self, stream: &RawStream) -> Result<()> {
        match (self, stream) {
            // SAFETY: a live stream of the current context.
            (RawEvent::Cuda(e), RawStream::Cuda(s)) => unsafe { e.record(s.raw()) },
            (RawEvent::Cpu(e), RawStream::Cpu(q)) => {
                let m = q.queue().record_now()?;
                // After the submit: a record that could not be queued must not become
                // the event's meaning (a wait on it would never end).
                e.set(m);
                Ok(())
            }
            _ => Err(mixed()),
        }
    }

    /// Whether the work before the latest record has completed (true if never recorded).
    pub fn query(&self) -> Result<bool> {
        match self {
            RawEvent::Cuda(e) => e.query(),
            RawEvent::Cpu(e) => Ok(e.is_complete()),
        }
    }

    pub fn synchronize(&self) -> Result<()> {
        match self {
            RawEvent::Cuda(e) => e.synchronize(),
            RawEvent::Cpu(e) => {
                super::cpu::refuse_blocking("Event::synchronize")?;
                e.synchronize();
                Ok(())
            }
        }
    }

    /// Milliseconds from `start` to `self` (both recorded and complete).
    pub fn elapsed_ms_since(&self, start: &RawEvent) -> Result<f32> {
        match (self, start) {
            (RawEvent::Cuda(e), RawEvent::Cuda(s)) => e.elapsed_ms_since(s),
            (RawEvent::Cpu(e), RawEvent::Cpu(s)) => e.elapsed_ms_since(s),
            _ => Err(mixed()),
        }
    }
}
