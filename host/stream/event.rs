//! [`Event`]: a timing event a user records on a stream, queries, waits for, waits on
//! from another stream ([`super::Stream::wait_event`]), and measures between.

use std::time::Duration;

use super::device::Gpu;
use crate::Result;
use crate::cuda::event::Event as RawEvent;

/// A CUDA event with timing enabled. Record it with [`super::Stream::record`]; it
/// completes when the work enqueued before the record has.
#[derive(Debug)]
pub struct Event {
    pub(crate) raw: RawEvent,
    pub(crate) gpu: Gpu,
}

impl Event {
    pub fn new(gpu: &Gpu) -> Result<Self> {
        gpu.bind()?;
        Ok(Self { raw: unsafe { RawEvent::new(true)? }, gpu: gpu.clone() })
    }

    /// Whether the work before the last record has completed (true if never recorded).
    pub fn is_complete(&self) -> Result<bool> {
        self.gpu.bind()?;
        self.raw.query()
    }

    /// Blocks until the work before the last record has completed.
    pub fn synchronize(&self) -> Result<()> {
        self.gpu.bind()?;
        self.raw.synchronize()
    }

    /// GPU time from `start` to `self` (both recorded and complete), about 0.5 µs
    /// resolution.
    pub fn elapsed_since(&self, start: &Event) -> Result<Duration> {
        Ok(Duration::from_secs_f64(self.elapsed_ms_since(start)? as f64 / 1e3))
    }

    /// [`Event::elapsed_since`] in milliseconds, as the driver reports it.
    pub fn elapsed_ms_since(&self, start: &Event) -> Result<f32> {
        self.gpu.same_device(&start.gpu)?;
        self.gpu.bind()?;
        self.raw.elapsed_ms_since(&start.raw)
    }
}

impl Gpu {
    /// A new timing event.
    pub fn event(&self) -> Result<Event> {
        Event::new(self)
    }
}
