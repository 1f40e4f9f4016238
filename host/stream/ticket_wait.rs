//! From the persistent queue to streams: a stream waits for a [`Ticket`]'s tasks the way
//! it waits for another stream's event, so kernels, copies and events enqueued after
//! the wait follow the tasks. On a GPU the wait is a one-thread kernel
//! (`resident_device::kernels::wait_ticket`) that polls the batch's segment records,
//! with no host in between; docs/protocol.md has its ordering. On the CPU device the
//! stream's thread waits for the ticket as `Ticket::wait` does (the ticket's state is
//! shared: the stream holds its own handle on it), so any runtime's tickets will do.

use super::event::Event;
use super::raw::RawStream;
use super::stream::Stream;
use crate::{Error, Result, Ticket};

impl Stream {
    /// Work enqueued here after this call starts only after every task of `ticket` has
    /// completed (its writes visible). If the runtime aborts or shuts down first, the
    /// wait ends early; the ticket then reports why. A ticket that is already done
    /// needs no wait, and none is enqueued. On the CPU device it cannot be captured into a
    /// graph (an error while the stream captures).
    pub fn wait_ticket(&self, ticket: &Ticket) -> Result<()> {
        let shared = &ticket.shared;
        match &self.raw {
            RawStream::Cuda(_) => {}
            RawStream::Cpu(q) => {
                let _once = self.capture_gate.once("Stream::wait_ticket on the CPU device")?;
                if ticket.try_wait().is_some() {
                    return Ok(());
                }
                let t = Ticket { state: ticket.state.clone(), shared: shared.clone() };
                // The wait's outcome is the ticket's to report, not the stream's: a
                // failed batch does not fail the stream (as on a GPU).
                return q.run(move || {
                    let _ = t.wait();
                    Ok(())
                });
            }
        }
        let cuda = shared.backend.cuda().ok_or_else(|| {
            Error::Config("the ticket's runtime runs on the CPU backend: wait for it from a stream of the CPU device".into())
        })?;
        if Some(cuda.context().ordinal()) != self.gpu.cuda_context().map(|c| c.ordinal()) {
            return Err(Error::ForeignHandle("ticket of a runtime on another device"));
        }
        if ticket.try_wait().is_some() {
            return Ok(());
        }
        self.gpu.bind()?;
        cuda.launch_wait_ticket(self.raw(), ticket.first_seq(), ticket.len() as u64, shared.tracker.segment_size())
    }
}

impl Ticket {
    /// An event recorded on `stream` after a wait for this ticket's tasks: it completes
    /// once they have (see [`Stream::wait_ticket`]); other streams can wait on it.
    pub fn record_event(&self, stream: &Stream) -> Result<Event> {
        stream.wait_ticket(self)?;
        let e = stream.device().event()?;
        stream.record(&e)?;
        Ok(e)
    }
}
