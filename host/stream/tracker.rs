//! Access tracking for device memory: how the API inserts the cross-stream waits, on
//! both backends.
//!
//! Each allocation ([`super::device_memory::DeviceMem`]) keeps the recent accesses to
//! its bytes: a byte range, read or write, the stream, and an event recorded right
//! after the access. Before an operation on stream `S` touches range `r`, `S` waits (an
//! event wait, no host wait: `cuStreamWaitEvent` on CUDA, a wait in the stream's queue
//! on the CPU) on every still-pending access of another stream that overlaps `r` and
//! conflicts with it (either side a write). So a buffer written on one stream and read
//! on another is ordered without the user's help, and chunks of one buffer used by
//! different streams (disjoint ranges) still overlap freely. Work on one stream needs
//! no event: stream order already serializes it.
//!
//! The buffers a call touches are locked in address order, and the waits, the
//! operation and its event are enqueued under those locks, so two host threads using
//! one buffer see each other's accesses in one order. Enqueueing never blocks (on the
//! CPU it is a push onto a queue), so no lock here is held across a wait.

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use super::device_memory::DeviceMem;
use super::raw::{RawEvent, RawStream};
use crate::Result;

#[derive(Debug)]
struct Access {
    bytes: Range<usize>,
    write: bool,
    stream: u64,
    done: Arc<RawEvent>,
}

/// The pending accesses of one allocation.
#[derive(Debug, Default)]
pub(crate) struct Tracker {
    accesses: Mutex<Vec<Access>>,
}

/// One range an operation touches.
pub(crate) struct Use<'a> {
    pub mem: &'a Arc<DeviceMem>,
    pub bytes: Range<usize>,
    pub write: bool,
}

impl Use<'_> {
    fn tracker(&self) -> &Tracker {
        &self.mem.tracker
    }
}

/// The stream an operation is enqueued on: its tracker id and handle.
#[derive(Clone, Copy)]
pub(crate) struct On<'s> {
    pub id: u64,
    pub stream: &'s RawStream,
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// Enqueues `op` on `on` after the conflicting accesses of other streams, then records
/// its own access. A CUDA context must be current.
pub(crate) fn ordered<R>(on: On<'_>, uses: &[Use<'_>], op: impl FnOnce() -> Result<R>) -> Result<R> {
    let mut order: Vec<&Tracker> = uses.iter().map(|u| u.tracker()).collect();
    order.sort_by_key(|t| *t as *const Tracker as usize);
    order.dedup_by_key(|t| *t as *const Tracker as usize);
    let mut locked: Vec<(&Tracker, MutexGuard<'_, Vec<Access>>)> =
        order.into_iter().map(|t| (t, t.accesses.lock().unwrap_or_else(|p| p.into_inner()))).collect();

    let mut waited: Vec<*const RawEvent> = vec![];
    for u in uses {
        let (_, list) = locked.iter().find(|(t, _)| std::ptr::eq(*t, u.tracker())).expect("locked above");
        for a in list.iter() {
            if a.stream == on.id || !(a.write || u.write) || !overlaps(&a.bytes, &u.bytes) {
                continue;
            }
            let p = Arc::as_ptr(&a.done);
            if waited.contains(&p) || a.done.query()? {
                continue;
            }
            on.stream.wait(&a.done)?;
            waited.push(p);
        }
    }

    let r = op()?;

    let done = Arc::new(RawEvent::ordering(on.stream)?);
    done.record(on.stream)?;
    for u in uses {
        let (_, list) = locked.iter_mut().find(|(t, _)| std::ptr::eq(*t, u.tracker())).expect("locked above");
        // Forget what is complete, and what this access covers: a later access on the
        // same stream to a superset of bytes that is a write (or a read covering a
        // read) completes after it, so waiting on the new one waits on both.
        list.retain(|a| {
            let covered = a.stream == on.id && u.bytes.start <= a.bytes.start && a.bytes.end <= u.bytes.end && (u.write || !a.write);
            !covered && !a.done.query().unwrap_or(true)
        });
        list.push(Access { bytes: u.bytes.clone(), write: u.write, stream: on.id, done: done.clone() });
    }
    Ok(r)
}

impl Tracker {
    /// Makes `stream` wait for every pending access (before a free).
    pub(crate) fn wait_all(&self, stream: &RawStream) -> Result<()> {
        let list = self.accesses.lock().unwrap_or_else(|p| p.into_inner());
        for a in list.iter() {
            if !a.done.query().unwrap_or(false) {
                stream.wait(&a.done)?;
            }
        }
        Ok(())
    }
}
