//! [`Event`]: a timing event a user records on a stream, queries, waits for, waits on
//! from another stream ([`super::Stream::wait_event`]), and measures between.

use std::time::Duration;

use super::cpu::CpuEvent;
use super::device::Device;
use super::raw::RawEvent;
use crate::{Error, Result};

/// An event with timing. Record it with [`super::Stream::record`]; it completes when
/// the work enqueued before the record has. A CUDA event on a GPU; on the CPU device,
/// the instant the stream's thread reached the record.
#[derive(Debug)]
pub struct Event {
    pub(crate) raw: RawEvent,
    pub(crate) gpu: Device,
}

impl Event {
    /// A new event on `gpu`'s device, not yet recorded.
    pub fn new(gpu: &Device) -> Result<Self> {
        gpu.bind()?;
        let raw = match gpu.cuda_context() {
            // SAFETY: the context is current (bound above).
            Some(_) => RawEvent::Cuda(unsafe { crate::driver::event::Event::new(true)? }),
            None => RawEvent::Cpu(CpuEvent::new()),
        };
        Ok(Self { raw, gpu: gpu.clone() })
    }

    /// Whether the work before the last record has completed (true if never recorded).
    pub fn is_complete(&self) -> Result<bool> {
        self.gpu.bind()?;
        self.raw.query()
    }

    /// Blocks until the work before the last record has completed. On the CPU device
    /// an error if called from a CPU stream's thread (a host callback).
    pub fn synchronize(&self) -> Result<()> {
        self.gpu.bind()?;
        self.raw.synchronize()
    }

    /// Time from `start` to `self` (both recorded and complete, `start` first): GPU
    /// time, about 0.5 µs resolution; on the CPU device, host time.
    pub fn elapsed_since(&self, start: &Event) -> Result<Duration> {
        let ms = self.elapsed_ms_since(start)?;
        Duration::try_from_secs_f64(ms as f64 / 1e3)
            .map_err(|_| Error::Config(format!("elapsed_since: the end event completed {ms} ms after the start event")))
    }

    /// [`Event::elapsed_since`] in milliseconds, as the driver reports it (negative if
    /// `start` completed later).
    pub fn elapsed_ms_since(&self, start: &Event) -> Result<f32> {
        self.gpu.same_device(&start.gpu)?;
        self.gpu.bind()?;
        self.raw.elapsed_ms_since(&start.raw)
    }
}

impl Device {
    /// A new timing event.
    pub fn event(&self) -> Result<Event> {
        Event::new(self)
    }
}
