//! Access tracking for device memory: how the API inserts the cross-stream waits.
//!
//! Each [`super::DeviceBuffer`] keeps the recent accesses to its bytes: a byte range,
//! read or write, the stream, and an event recorded right after the access. Before an
//! operation on stream `S` touches range `r`, `S` waits (`cuStreamWaitEvent`, no host
//! wait) on every still-pending access of another stream that overlaps `r` and
//! conflicts with it (either side a write). So a buffer written on one stream and read
//! on another is ordered without the user's help, and chunks of one buffer used by
//! different streams (disjoint ranges) still overlap freely. Work on one stream needs
//! no event: stream order already serializes it.
//!
//! The buffers a call touches are locked in address order, and the waits, the
//! operation and its event are enqueued under those locks, so two host threads using
//! one buffer see each other's accesses in one order.

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::sys::CUstream;

use crate::Result;
use crate::cuda::driver::check;
use crate::cuda::event::Event as RawEvent;

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
    pub tracker: &'a Tracker,
    pub bytes: Range<usize>,
    pub write: bool,
}

/// The stream an operation is enqueued on: its tracker id and raw handle.
#[derive(Clone, Copy)]
pub(crate) struct On {
    pub id: u64,
    pub raw: CUstream,
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// Enqueues `op` on `on` after the conflicting accesses of other streams, then records
/// its own access. The context must be current.
pub(crate) fn ordered<R>(on: On, uses: &[Use<'_>], op: impl FnOnce() -> Result<R>) -> Result<R> {
    let mut order: Vec<&Tracker> = uses.iter().map(|u| u.tracker).collect();
    order.sort_by_key(|t| *t as *const Tracker as usize);
    order.dedup_by_key(|t| *t as *const Tracker as usize);
    let mut locked: Vec<(&Tracker, MutexGuard<'_, Vec<Access>>)> =
        order.into_iter().map(|t| (t, t.accesses.lock().unwrap_or_else(|p| p.into_inner()))).collect();

    let mut waited: Vec<*const RawEvent> = vec![];
    for u in uses {
        let (_, list) = locked.iter().find(|(t, _)| std::ptr::eq(*t, u.tracker)).expect("locked above");
        for a in list.iter() {
            if a.stream == on.id || !(a.write || u.write) || !overlaps(&a.bytes, &u.bytes) {
                continue;
            }
            let p = Arc::as_ptr(&a.done);
            if waited.contains(&p) || a.done.query()? {
                continue;
            }
            check(unsafe { cudarc::driver::sys::cuStreamWaitEvent(on.raw, a.done.raw(), 0) }, "cuStreamWaitEvent")?;
            waited.push(p);
        }
    }

    let r = op()?;

    let done = Arc::new(unsafe { RawEvent::new(false)? });
    unsafe { done.record(on.raw)? };
    for u in uses {
        let (_, list) = locked.iter_mut().find(|(t, _)| std::ptr::eq(*t, u.tracker)).expect("locked above");
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
    /// Makes `raw` wait for every pending access (before a free or a host write).
    pub(crate) fn wait_all(&self, raw: CUstream) -> Result<()> {
        let list = self.accesses.lock().unwrap_or_else(|p| p.into_inner());
        for a in list.iter() {
            if !a.done.query().unwrap_or(false) {
                check(unsafe { cudarc::driver::sys::cuStreamWaitEvent(raw, a.done.raw(), 0) }, "cuStreamWaitEvent")?;
            }
        }
        Ok(())
    }
}
