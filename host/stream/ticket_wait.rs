//! From the persistent queue to streams: a stream waits for a [`Ticket`]'s tasks the way
//! it waits for another stream's event, so kernels, copies and events enqueued after
//! the wait follow the tasks, with no host in between. The wait is a one-thread kernel
//! (`resident_device::kernels::wait_ticket`) that polls the batch's segment records;
//! docs/protocol.md has its ordering.

use super::event::Event;
use super::stream::Stream;
use crate::{Error, Result, Ticket};

impl Stream {
    /// Work enqueued here after this call starts only after every task of `ticket` has
    /// completed (its writes visible). If the runtime aborts or shuts down first, the
    /// wait ends early; the ticket then reports why. A ticket that is already done
    /// needs no wait, and none is enqueued.
    pub fn wait_ticket(&self, ticket: &Ticket) -> Result<()> {
        let shared = &ticket.shared;
        let cuda = shared.backend.cuda().ok_or(Error::NoDevice)?;
        if cuda.context().ordinal() != self.gpu.inner.ctx.ordinal() {
            return Err(Error::Config("the ticket's runtime runs on another device".into()));
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
        let e = stream.gpu().event()?;
        stream.record(&e)?;
        Ok(e)
    }
}
