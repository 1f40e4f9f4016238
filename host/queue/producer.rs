//! The producer side: sequence numbers, ring space, staging and publication. One
//! producer lock serializes submitters (the copy engine serializes them anyway) and
//! the buffer registry, so a buffer can never be freed between a task's validation
//! and its publication.

use resident_shared::lists::LIST_RUNS;
use resident_shared::{Task, task_flags};
use std::sync::Arc;
use std::time::Instant;

use super::placement::Placement;
use super::ticket_state::TicketState;
use crate::buffer::BufferRegistry;
use crate::counter::CounterRegistry;
use crate::runtime::Shared;
use crate::{Error, Result};

/// Slots published per copy: small enough that workers start on the first chunk while
/// the copy engine moves the next; large enough that driver calls stay few.
pub(crate) const PUBLISH_CHUNK: usize = 4096;

/// Slots per list run of a host batch read in place from the host ring: a run costs
/// the relay one read of the host's table, so runs can be small, and the workers start
/// on the first while the host writes the next.
pub(crate) const RELAY_CHUNK: usize = 1024;

pub(crate) struct Producer {
    /// Sequence number of the next task.
    pub next: u64,
    /// No more submissions (shutdown or fault).
    pub closed: bool,
    pub registry: BufferRegistry,
    pub counters: CounterRegistry,
    /// List runs published so far; run `r` uses table entry `r % LIST_RUNS`.
    pub runs: u64,
    /// The end (sequence number past its last task) of the run in each table entry: an
    /// entry is written again only once everything before its end has completed.
    pub run_ends: [u64; LIST_RUNS],
}

impl Producer {
    pub fn new() -> Self {
        Self {
            next: 0,
            closed: false,
            registry: BufferRegistry::new(),
            counters: CounterRegistry::new(),
            runs: 0,
            run_ends: [0; LIST_RUNS],
        }
    }
}

/// What `submit` does when the ring has no room.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum WhenFull {
    /// Wait for room, until it frees, the device fails, or shutdown aborts the workers.
    Wait,
    /// `Error::QueueFull` at once.
    Fail,
    /// As `Wait`, but `Error::Timeout` at this instant (shutdown's sentinel).
    Until(Instant),
}

/// Who submits: decides which checks apply.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A user batch: refused after shutdown, validated on the host.
    User,
    /// `submit_unchecked`: refused after shutdown, checked only by the device.
    Unchecked,
    /// The runtime's own sentinel: accepted while shutting down.
    Runtime,
}

/// Where the tasks of a submission come from.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    /// Tasks in host memory, validated now, staged and copied host-to-device.
    Host(&'a [Task]),
    /// A resident task list (validated at upload; `handles` re-checked now), read in
    /// place by the workers as list runs (`device/src/lists.rs`): no staging, no copy.
    Resident { addr: u64, len: usize, handles: &'a [resident_shared::BufferHandle] },
}

impl Source<'_> {
    fn len(&self) -> usize {
        match self {
            Source::Host(t) => t.len(),
            Source::Resident { len, .. } => *len,
        }
    }
}

/// Validates, stages and publishes a batch as one ticket.
pub(crate) fn submit(shared: &Shared, src: Source<'_>, keep_results: bool, full: WhenFull, origin: Origin) -> Result<Arc<TicketState>> {
    let mut p = shared.producer.lock().unwrap();
    if p.closed && origin != Origin::Runtime {
        return Err(Error::ShutDown);
    }
    if origin == Origin::Runtime {
        shared.fault()?;
    } else {
        // A dead device is noticed here too, not only by waiters (rate-limited poll).
        shared.poll_health()?;
    }
    match src {
        Source::Host(tasks) if origin == Origin::User => {
            crate::validate::validate(tasks, &shared.set, &p.registry, &p.counters)?;
        }
        Source::Resident { handles, .. } => {
            if let Some(h) = handles.iter().find(|h| p.registry.entry(**h).is_none()) {
                return Err(Error::InvalidTask { index: 0, reason: crate::Rejection::BadBuffer { arg: 0, handle: h.0 } });
            }
        }
        _ => {}
    }
    let n = src.len();
    let batch_len = u32::try_from(n).map_err(|_| Error::BatchTooLarge(n))?;
    let cap = shared.backend.capacity() as u64;
    if full == WhenFull::Fail && n as u64 > cap.saturating_sub(p.next - shared.tracker.advance(&shared.backend)) {
        return Err(Error::QueueFull);
    }
    shared.bind()?;
    let first = p.next;
    // A lone leaf task from the host resolves from its own record (`task_flags::EXPRESS`):
    // the latency path, which the relay warp may shorten further by running it itself.
    // A leaf: its type declares no children (and it is a checked type; an unknown id
    // only fails on the device).
    let express = match src {
        Source::Host([t]) => crate::validate::declare(t, &shared.set, |_| {}).is_ok_and(|d| !d.spawns && !d.unchecked),
        _ => false,
    };
    let mut flags = if keep_results { task_flags::RESULT } else { 0 };
    if express {
        flags |= task_flags::EXPRESS;
    }
    let place = Placement::batch(batch_len, flags, shared.tracker.segment_size());
    let ticket = Arc::new(TicketState::new(first, first + n as u64, keep_results, express));
    shared.tracker.register(ticket.clone());
    // Host tasks are staged and copied in chunks so the workers start early; a resident
    // list is neither staged nor copied, so it goes in as few runs as the ring allows
    // (or `list_chunk` tasks per run). Chunks are multiples of the segment size (powers
    // of two, the segment at most half the ring) and at most half the ring: every
    // segment before a chunk is wholly published before the producer waits for room,
    // so the wait always ends.
    let seg = shared.tracker.segment_size() as usize;
    let piece = |c: u32| (c as usize).clamp(seg, cap as usize / 2);
    // A host batch goes into the ring in place and is published as list runs over the
    // ring when the relay publishes runs (CUDA, `RuntimeConfig::relay_publish`), except
    // a small one, which the relay takes inline.
    let host_ring = match src {
        Source::Host(_) => shared.backend.host_ring().filter(|_| !shared.backend.inline(n as u64)),
        Source::Resident { .. } => None,
    };
    let (first_chunk, chunk) = match src {
        Source::Host(_) => {
            let c = match shared.config.publish_chunk {
                0 if host_ring.is_some() => RELAY_CHUNK,
                0 => PUBLISH_CHUNK,
                c => piece(c),
            };
            (c.min(cap as usize / 2), c.min(cap as usize / 2))
        }
        Source::Resident { .. } => {
            let rest = if shared.config.list_chunk == 0 { cap as usize / 2 } else { piece(shared.config.list_chunk) };
            (if shared.config.list_first_piece == 0 { rest } else { piece(shared.config.list_first_piece) }, rest)
        }
    };
    let mut at = first;
    while at < first + n as u64 {
        let off = (at - first) as usize;
        let mut len = if at == first { first_chunk } else { chunk }.min(n - off);
        if host_ring.is_some() {
            // A run is contiguous in memory: it ends at the ring's end. (The rest, in
            // the next run, ends at most half a ring later: the wait below still ends,
            // see above.)
            len = len.min((cap - at % cap) as usize);
        }
        let end = at + len as u64;
        // Slots `at..end` are free once everything before `end - cap` has completed.
        // The wait ends on a fault (health polls), at the deadline, or when shutdown
        // aborts the workers; the ticket of a batch cut short is resolved by the
        // fault or by shutdown (`fail_all`), and `next` covers exactly what was
        // published. A list run also needs its table entry, free once the run that
        // used it last has completed.
        let entry = (p.runs % LIST_RUNS as u64) as usize;
        let entry_end = match (src, host_ring) {
            (Source::Resident { .. }, _) | (_, Some(_)) => p.run_ends[entry],
            _ => 0,
        };
        let room = || {
            let done = shared.tracker.advance(&shared.backend);
            done + cap >= end && done >= entry_end
        };
        let deadline = match full {
            WhenFull::Until(d) => Some(d),
            _ => None,
        };
        shared.wait_until(deadline, || shared.is_aborted() || room())?;
        if shared.is_aborted() {
            // The workers are leaving: nothing published now would run.
            shared.fault()?;
            return Err(Error::ShutDown);
        }
        let published = match (src, host_ring) {
            (Source::Host(tasks), Some(ring)) => {
                // SAFETY: the slots and the entry are free (just checked) and we hold
                // the producer lock; the run lies in the host ring (it stops at the
                // ring's end), which outlives the kernel, and its slots are not written
                // again before its tasks complete.
                unsafe {
                    shared.backend.stage(at, &tasks[off..off + len], place.at(off as u32));
                    p.runs += 1;
                    p.run_ends[entry] = end;
                    shared.backend.publish_run(at, end, ring + (at % cap) * size_of::<Task>() as u64, entry)
                }
            }
            (Source::Host(tasks), None) => {
                // SAFETY: the slots are free (just checked) and we hold the producer lock.
                unsafe { shared.backend.stage(at, &tasks[off..off + len], place.at(off as u32)) };
                shared.backend.publish(at, end)
            }
            (Source::Resident { addr, .. }, _) => {
                let from = addr + (off * size_of::<Task>()) as u64;
                p.runs += 1;
                p.run_ends[entry] = end;
                // SAFETY: the slots and the entry are free (just checked); `from..`
                // lies in the list (off + len <= n), which outlives its tasks
                // (`TaskList`'s drop waits for them).
                unsafe { shared.backend.publish_run(at, end, from, entry) }
            }
        };
        // A driver call that failed because the device died reports that fault. Any
        // other failed publication leaves the ring in an unknown state (this ticket
        // registered, its slots perhaps half copied): it becomes the runtime's fault,
        // so that every ticket resolves and nothing is published after it.
        published.map_err(|e| match shared.explain(e) {
            Error::ShutDown => Error::ShutDown,
            e => shared.record_fault(e),
        })?;
        at = end;
        p.next = end;
    }
    Ok(ticket)
}

/// For `wait_until`: a deadline from an optional timeout.
pub(crate) fn deadline(timeout: Option<std::time::Duration>) -> Option<Instant> {
    timeout.map(|t| Instant::now() + t)
}
