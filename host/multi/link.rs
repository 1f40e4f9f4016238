//! Links between runtimes: a task running in runtime A pushes follow-up tasks into
//! runtime B's queue (`TaskCx::push_to`), B on another device or the same one. This is
//! the path through the host (the fallback for when there is no peer access, and for
//! now the only one): A's warps push into an outbox in memory the host reads (mapped
//! pinned memory on CUDA), and a forwarder thread of the link pops what they pushed and
//! submits it to B, where B's checks apply as to any submission. The layout is
//! `resident_shared::link`, the device side and its orderings (L1-L4)
//! `resident_device::link`; the forwarder's side:
//!
//! F1. Pop: an `Acquire` load of the slot's sequence word, seeing `pos + 1`, pairs with
//!     the push's `st.release.sys` (L4): the task's bytes are there to read.
//! F2. Hand back: after reading the slot, a `Release` store of `pos + capacity`, which
//!     the next lap's push acquires (L2) before it overwrites the slot.
//! F3. Positions are popped in order by this one thread; a pushed task is forwarded
//!     once: a batch that B's checks refuse at its task `i` is offered again as its
//!     first `i` tasks, and the refused task, once first, counts as failed alone.
//! F4. Flush: a task whose push completed before its ticket resolved is visible to the
//!     forwarder's next poll (the push's release precedes the task's completion record,
//!     which the host acquired); `Link::flush` waits for two passes of the forwarder
//!     after it starts, then for B's tickets of everything popped by then (pushes after
//!     that do not hold it back). The counts are atomics, so that readers of
//!     `Link::stats` never hold up the forwarder: a flusher announces itself
//!     (`flushers`, SeqCst) before it reads the pass count (`polls`, SeqCst); a pass
//!     increments `polls` (SeqCst) after its pops and retirements, then wakes the
//!     flushers if it sees any, under the state lock, so no wake-up falls between a
//!     flusher's check and its wait; `forwarded` is read after `polls` and counted
//!     before it, `completed`/`failed` are Release increments read with Acquire.
//! F5. Close: the entry loses its generation (pushes after it fail with `BadLink`), then
//!     the forwarder waits until every task A had reserved by then has completed (a
//!     push that read the entry before is done) and every position handed out (A's
//!     `enqueue` counter) has been popped, and ends once B's tickets resolve: at most
//!     10 s for A's tasks and 10 s for B's tickets, after which what is left counts as
//!     failed (`Error::Timeout`). The same when A closes: a link that is never dropped
//!     does not keep the runtimes alive.
//! F6. The forwarder never waits for room in the other runtime: what it cannot take now
//!     stays in a backlog in host memory (up to `BACKLOG_MAX` tasks), and the outbox
//!     keeps draining. Runtimes that
//!     push into each other (A to B and B to A) would otherwise wait on each other in
//!     a cycle: A's ring full of tasks waiting to push, B's full of tasks waiting to
//!     push back, both forwarders waiting for room (it happened: 2 x H200,
//!     2026-11-26, and on the CPU backend).
//!
//! Memory: an outbox lives as long as runtime A's backend (a push that read the entry
//! just before a close may still be writing it), so a runtime makes at most
//! `MAX_LINKS` links over its life (`Error::TooManyLinks`).

use resident_shared::Task;
use resident_shared::link::{self, LinkEntry, LinkId};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::queue::producer::{self, Origin, Source, WhenFull};
use crate::queue::ticket::Ticket;
use crate::runtime::Shared;
use crate::{Error, Result, Runtime};

/// Tasks the forwarder submits to the other runtime in one batch, at most (and at
/// most half its ring), and pops from the outbox per pass.
const FORWARD_BATCH: usize = 1024;
const POP_MAX: u64 = 4096;

/// Most tasks the backlog holds (256 MiB of records) before the forwarder stops popping
/// and lets the outbox fill, so that pushes wait for room: F6's bound (runtimes whose
/// tasks push more than they run, as a ping-pong that doubles each round, would
/// otherwise grow it without limit).
const BACKLOG_MAX: usize = 1 << 22;

/// How long the forwarder spins on an empty outbox before it sleeps, and its longest
/// sleep: the latency a push may wait for after a quiet spell.
const SPIN: Duration = Duration::from_micros(50);
const MAX_SLEEP: Duration = Duration::from_micros(200);

/// How long a closing forwarder waits for the pushing runtime's tasks to finish.
const CLOSE_WAIT: Duration = Duration::from_secs(10);

/// Generations of links, for the whole process: an id is handed out once.
static GENERATION: AtomicU32 = AtomicU32::new(0);

/// A new link generation (host or peer link), or `TooManyLinks` once 2^32 are spent.
pub(crate) fn next_generation() -> Result<u32> {
    let generation = GENERATION.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
    if generation == 0 { Err(Error::TooManyLinks(link::MAX_LINKS)) } else { Ok(generation) }
}

/// What a link has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Tasks popped from the outbox (pushed by the first runtime's tasks).
    pub forwarded: u64,
    /// Of those, completed in the other runtime.
    pub completed: u64,
    /// Of those, refused by the other runtime's checks or failed there.
    pub failed: u64,
    /// Of those, waiting in host memory for room in the other runtime (F6).
    pub backlog: u64,
}

/// A link from one runtime to another ([`Link::new`]): tasks of the first push
/// follow-up tasks into the second through it (`TaskCx::push_to` with [`Link::id`]).
/// Dropping it stops the pushes (they fail with `Status::BadLink`) and forwards what
/// was pushed before, without waiting; [`Link::close`] waits for that.
///
/// Two paths behind the same API: through the host (a forwarder thread submits what
/// the tasks pushed; any two runtimes), or peer to peer ([`Link::peer`]:
/// straight into the other device's memory, drained by its relay warp).
pub struct Link {
    path: Path,
}

enum Path {
    Host(HostLink),
    Peer(crate::multi::peer_link::PeerLink),
}

/// A link through the host: the outbox and its forwarder thread.
struct HostLink {
    inner: Arc<Inner>,
    forwarder: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link").field("id", &self.id()).field("peer", &self.is_peer()).field("stats", &self.stats()).finish()
    }
}

impl Link {
    pub(crate) fn of_peer(p: crate::multi::peer_link::PeerLink) -> Self {
        Self { path: Path::Peer(p) }
    }

    /// The id tasks push through (`TaskCx::push_to`): put it in their arguments.
    pub fn id(&self) -> LinkId {
        match &self.path {
            Path::Host(h) => h.inner.id,
            Path::Peer(p) => p.id(),
        }
    }

    /// Whether the link goes peer to peer ([`Link::peer`]), not through the
    /// host.
    pub fn is_peer(&self) -> bool {
        matches!(self.path, Path::Peer(_))
    }

    /// What the link has forwarded so far. For a peer link, `forwarded` counts the
    /// positions its pushes took (a push still waiting for room included), read from
    /// the device, and `backlog` is always 0; an error reading them (a dead device)
    /// reads as zeros.
    pub fn stats(&self) -> LinkStats {
        match &self.path {
            Path::Host(h) => h.inner.stats(),
            Path::Peer(p) => p.stats().unwrap_or_default(),
        }
    }

    /// Of the tasks pushed through the link, how many have completed in the other
    /// runtime so far: [`LinkStats::completed`] without the rest, and cheap on both
    /// paths (no driver call; for a peer link, as the other runtime's relay warp last
    /// copied it to host memory).
    pub fn completed(&self) -> u64 {
        match &self.path {
            Path::Host(h) => h.inner.counts.completed.load(Ordering::Acquire),
            Path::Peer(p) => p.done().0,
        }
    }

    /// Waits until every task pushed before this call (by tasks whose tickets have
    /// resolved) has been forwarded and has completed in the other runtime (F4); the
    /// first error among them since the last flush, if any.
    pub fn flush(&self) -> Result<LinkStats> {
        self.flush_until(None)
    }

    /// [`Link::flush`], giving up with `Error::Timeout` after `timeout`.
    pub fn flush_timeout(&self, timeout: Duration) -> Result<LinkStats> {
        self.flush_until(crate::util::deadline::after(timeout))
    }

    fn flush_until(&self, deadline: Option<Instant>) -> Result<LinkStats> {
        match &self.path {
            Path::Host(h) => h.flush_until(deadline),
            Path::Peer(p) => p.flush_until(deadline),
        }
    }

    /// Stops the link (F5: pushes from now on fail with `Status::BadLink`), forwards
    /// every task pushed before, and waits until they have completed in the other
    /// runtime; the link's totals, or the first error since the last flush.
    pub fn close(self) -> Result<LinkStats> {
        match self.path {
            Path::Host(h) => h.close(),
            Path::Peer(p) => p.close(),
        }
    }
}

struct Inner {
    from: Arc<Shared>,
    to: Arc<Shared>,
    id: LinkId,
    /// The outbox's host address: `capacity` sequence words, then the slots.
    seqs: *const AtomicU32,
    slots: *const Task,
    capacity: u32,
    stop: AtomicBool,
    /// The forwarder's counts, read without a lock: a caller polling
    /// [`Link::stats`] never holds up the forwarder (it did when they sat under the
    /// mutex: a spinning reader and the forwarder took turns at it on every pass).
    counts: Counts,
    /// Threads in [`Link::flush`]: the forwarder wakes them after a pass only when
    /// there are any (F4).
    flushers: AtomicUsize,
    state: Mutex<State>,
    changed: Condvar,
}

/// [`LinkStats`] as atomics, and the forwarder's passes. Written by the forwarder only
/// (`Relaxed` increments: each is a count, ordered with nothing else); a pass's `polls`
/// increment is `SeqCst`, against the `SeqCst` increment of `flushers` (F4).
#[derive(Default)]
struct Counts {
    forwarded: AtomicU64,
    completed: AtomicU64,
    failed: AtomicU64,
    backlog: AtomicU64,
    polls: AtomicU64,
}

// SAFETY: the raw pointers name the outbox, which lives as long as `from`'s backend
// (held here); only the forwarder thread pops (F1-F3).
unsafe impl Send for Inner {}
unsafe impl Sync for Inner {}

#[derive(Default)]
struct State {
    /// The first error since the last flush.
    error: Option<Error>,
    /// The forwarder has ended.
    done: bool,
}

impl Link {
    /// A link from runtime `from` to `to` (another device's runtime, or any runtime):
    /// `from`'s tasks push follow-up tasks into `to` with `TaskCx::push_to` and
    /// [`Link::id`]; a forwarder thread submits them there, checked by `to` as any
    /// submission (docs/scaling.md). A link from a runtime to itself works too.
    pub fn new(from: &Runtime, to: &Runtime) -> Result<Link> {
        Link::with_capacity(from, to, link::DEFAULT_OUTBOX)
    }

    /// [`Link::new`] with an outbox of `capacity` slots (a power of two, 2 to 2^20):
    /// pushes in flight before the forwarder pops them.
    pub fn with_capacity(from: &Runtime, to: &Runtime, capacity: u32) -> Result<Link> {
        if !capacity.is_power_of_two() || !(2..=1 << 20).contains(&capacity) {
            return Err(Error::Config(format!("link outbox capacity {capacity}: a power of two from 2 to 2^20")));
        }
        let from = &from.shared;
        from.usable()?;
        to.shared.usable()?;
        let generation = next_generation()?;
        from.bind()?;
        let (index, host, device) = from.backend.new_outbox(link::outbox_bytes(capacity))?;
        from.backend.set_link_entry(index, LinkEntry { outbox: device, mask: capacity - 1, generation }, false)?;
        let inner = Arc::new(Inner {
            from: from.clone(),
            to: to.shared.clone(),
            id: LinkId { index: index as u32, generation },
            seqs: host as *const AtomicU32,
            // SAFETY: inside the outbox of `outbox_bytes(capacity)`.
            slots: unsafe { host.add(link::outbox_slots_offset(capacity)) } as *const Task,
            capacity,
            stop: AtomicBool::new(false),
            counts: Counts::default(),
            flushers: AtomicUsize::new(0),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let run = inner.clone();
        let forwarder = std::thread::Builder::new().name(format!("resident-link-{index}")).spawn(move || run.forward());
        match forwarder {
            Ok(f) => Ok(Link { path: Path::Host(HostLink { inner, forwarder: Some(f) }) }),
            Err(e) => {
                // No forwarder: the id must name no live link (pushes would wait forever).
                let _ = from.backend.set_link_entry(index, LinkEntry::EMPTY, true);
                Err(Error::Config(format!("could not start a link's forwarder thread: {e}")))
            }
        }
    }
}

impl HostLink {
    fn flush_until(&self, deadline: Option<Instant>) -> Result<LinkStats> {
        let inner = &self.inner;
        // F4: announced before the first read of `polls` (both SeqCst): a pass whose
        // increment this read misses sees the announcement and wakes this thread.
        inner.flushers.fetch_add(1, Ordering::SeqCst);
        struct Leave<'a>(&'a AtomicUsize);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let _leave = Leave(&inner.flushers);
        let mut st = inner.lock();
        // F4: two whole passes of the forwarder after this call began (the second began
        // after it: it popped whatever was visible then); then everything popped by
        // then has been retired. Later pushes do not hold it back.
        let passes = inner.counts.polls.load(Ordering::SeqCst) + 2;
        let mut target = None;
        loop {
            if st.done {
                break;
            }
            if target.is_none() && inner.counts.polls.load(Ordering::SeqCst) >= passes {
                target = Some(inner.counts.forwarded.load(Ordering::Relaxed));
            }
            let c = &inner.counts;
            // Acquire, pairing with the forwarder's Release increments after it saw the
            // other runtime's tickets resolve.
            if target.is_some_and(|t| c.completed.load(Ordering::Acquire) + c.failed.load(Ordering::Acquire) >= t) {
                break;
            }
            let wait = match deadline {
                Some(d) => d.checked_duration_since(Instant::now()).ok_or(Error::Timeout)?.min(Duration::from_millis(1)),
                None => Duration::from_millis(1),
            };
            // A sleeping forwarder polls now rather than at the end of its sleep.
            if let Some(f) = &self.forwarder {
                f.thread().unpark();
            }
            st = self.inner.changed.wait_timeout(st, wait).unwrap_or_else(|e| e.into_inner()).0;
        }
        match st.error.take() {
            Some(e) => Err(e),
            None => Ok(inner.stats()),
        }
    }

    fn close(mut self) -> Result<LinkStats> {
        self.stop();
        if let Some(f) = self.forwarder.take() {
            let _ = f.join();
        }
        let mut st = self.inner.lock();
        match st.error.take() {
            Some(e) => Err(e),
            None => Ok(self.inner.stats()),
        }
    }

    fn stop(&self) {
        if !self.inner.stop.swap(true, Ordering::SeqCst) {
            // F5: pushes that read the entry from now on fail. An error here (a dead
            // runtime) leaves nothing to stop: its workers are gone.
            let _ = self.inner.from.bind();
            let _ = self.inner.from.backend.set_link_entry(self.inner.id.index as usize, LinkEntry::EMPTY, true);
        }
    }
}

impl Drop for HostLink {
    fn drop(&mut self) {
        // The forwarder finishes by itself (bounded by CLOSE_WAIT and the tickets of
        // what it forwarded): a drop never waits.
        self.stop();
    }
}

impl Inner {
    /// The counts: `completed` and `failed` read before `forwarded`, so that a
    /// snapshot never shows more done than forwarded (the forwarder counts a task
    /// forwarded before it can count it done).
    fn stats(&self) -> LinkStats {
        let c = &self.counts;
        let (completed, failed) = (c.completed.load(Ordering::Acquire), c.failed.load(Ordering::Acquire));
        LinkStats { completed, failed, forwarded: c.forwarded.load(Ordering::Acquire), backlog: c.backlog.load(Ordering::Relaxed) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next task at `pos`, if pushed (F1, F2).
    fn pop(&self, pos: u32) -> Option<Task> {
        let i = pos & (self.capacity - 1);
        // SAFETY: `i` < capacity: a sequence word of the live outbox.
        let seq = unsafe { &*self.seqs.add(i as usize) };
        if seq.load(Ordering::Acquire).wrapping_add(i) != pos.wrapping_add(1) {
            return None;
        }
        // SAFETY: a slot of the live outbox, published by the push (F1) and not
        // written again until the store below hands it back. Volatile: the device
        // writes it.
        let task = unsafe { std::ptr::read_volatile(self.slots.add(i as usize)) };
        seq.store(pos.wrapping_add(self.capacity).wrapping_sub(i), Ordering::Release);
        Some(task)
    }

    /// The forwarder thread.
    fn forward(&self) {
        let mut pos = 0u32;
        // Popped, not yet taken by the other runtime (F6).
        let mut backlog: VecDeque<Task> = VecDeque::new();
        let mut chunk = Vec::with_capacity(FORWARD_BATCH);
        let mut pending: VecDeque<(Ticket, u64)> = VecDeque::new();
        let batch = FORWARD_BATCH.min(self.to.backend.capacity() as usize / 2).max(1);
        let mut quiet_since = Instant::now();
        let mut sleep = Duration::from_micros(5);
        // F5: once stopping, the count of tasks the pushing runtime had reserved, and
        // when the wait for them began.
        let mut closing: Option<(u64, Instant)> = None;
        loop {
            let mut popped = 0u64;
            while popped < POP_MAX && backlog.len() < BACKLOG_MAX {
                match self.pop(pos) {
                    Some(t) => {
                        backlog.push_back(t);
                        pos = pos.wrapping_add(1);
                        popped += 1;
                    }
                    None => break,
                }
            }
            if popped > 0 {
                // Release: read after `completed` by `stats` (Acquire both).
                self.counts.forwarded.fetch_add(popped, Ordering::Release);
            }
            let mut moved = false;
            while !backlog.is_empty() {
                chunk.clear();
                chunk.extend(backlog.iter().take(batch).copied());
                match self.try_forward(&chunk, &mut pending) {
                    Some(n) => {
                        backlog.drain(..n);
                        moved = true;
                    }
                    None => break,
                }
            }
            self.retire(&mut pending);
            self.counts.backlog.store(backlog.len() as u64, Ordering::Relaxed);
            // F4: the pass is counted, then the flushers are looked for (both SeqCst,
            // against `flush_until`); the lock around the notification keeps it from
            // falling between a flusher's checks and its wait.
            self.counts.polls.fetch_add(1, Ordering::SeqCst);
            if self.flushers.load(Ordering::SeqCst) > 0 {
                drop(self.lock());
                self.changed.notify_all();
            }
            // A closed pushing runtime pushes no more: finish as after a stop (so a
            // link that is never dropped does not keep both runtimes alive for ever).
            if self.stop.load(Ordering::SeqCst) || self.from.life.is_closing() {
                let (target, since) = *closing.get_or_insert_with(|| {
                    let next = self.from.producer.lock().unwrap_or_else(|e| e.into_inner()).next;
                    (next, Instant::now())
                });
                let drained =
                    self.from.tracker.advance(&self.from.backend) >= target || self.from.is_aborted() || since.elapsed() > CLOSE_WAIT;
                let timed_out = since.elapsed() > 2 * CLOSE_WAIT;
                // Every position handed out has been popped: no push is between its
                // claim (L2) and its publication (L4), and none is waiting at `pos` (a
                // task there needs a claim). (A dead runtime's counter cannot be read,
                // and its warps push no more.)
                let enqueued = self.from.backend.link_enqueued(self.id.index as usize).unwrap_or(pos);
                if (drained && popped == 0 && backlog.is_empty() && enqueued == pos) || timed_out {
                    // Everything pushed is forwarded; wait for the other side, bounded by
                    // its tickets (which resolve, fail, or time out with its runtime).
                    let waiting = Instant::now();
                    while !pending.is_empty() && waiting.elapsed() < CLOSE_WAIT {
                        self.retire(&mut pending);
                        if !pending.is_empty() {
                            std::thread::sleep(Duration::from_micros(50));
                        }
                    }
                    let mut st = self.lock();
                    // Pushes claimed but never published (a task still running at the
                    // time limit) are lost too.
                    let unpublished = enqueued.wrapping_sub(pos) as u64;
                    let lost: u64 = pending.iter().map(|(_, n)| n).sum::<u64>() + backlog.len() as u64 + unpublished;
                    if lost > 0 {
                        self.counts.failed.fetch_add(lost, Ordering::Release);
                        st.error.get_or_insert(Error::Timeout);
                    }
                    st.done = true;
                    drop(st);
                    self.changed.notify_all();
                    return;
                }
            }
            if popped > 0 || moved {
                quiet_since = Instant::now();
                sleep = Duration::from_micros(5);
            } else if quiet_since.elapsed() < SPIN {
                std::hint::spin_loop();
            } else {
                // `Link::flush` unparks it.
                std::thread::park_timeout(sleep);
                sleep = (sleep * 2).min(MAX_SLEEP);
            }
        }
    }

    /// Offers the front of the backlog to the other runtime without waiting (F3, F6):
    /// how many tasks it took (submitted, or refused by its checks and counted as
    /// failed), or `None` if it has no room now. A batch its checks refuse at task `i`
    /// is offered again as its first `i` tasks, and the refused task, once it is first,
    /// is dropped alone.
    fn try_forward(&self, tasks: &[Task], pending: &mut VecDeque<(Ticket, u64)>) -> Option<usize> {
        match producer::submit(&self.to, Source::Host(tasks), false, WhenFull::Fail, Origin::User) {
            Ok(state) => {
                pending.push_back((Ticket { state, shared: self.to.clone() }, tasks.len() as u64));
                Some(tasks.len())
            }
            Err(Error::QueueFull | Error::WouldBlock) => None,
            Err(Error::InvalidTask { index, .. }) if index > 0 && index < tasks.len() => self.try_forward(&tasks[..index], pending),
            Err(e @ Error::InvalidTask { .. }) => {
                self.failed(1, e);
                Some(1)
            }
            Err(e) => {
                self.failed(tasks.len() as u64, e);
                Some(tasks.len())
            }
        }
    }

    /// Counts the tickets that resolved, in order.
    fn retire(&self, pending: &mut VecDeque<(Ticket, u64)>) {
        while let Some((t, n)) = pending.front() {
            match t.try_wait() {
                None => return,
                Some(Ok(())) => {
                    self.counts.completed.fetch_add(*n, Ordering::Release);
                }
                Some(Err(e)) => self.failed(*n, e),
            }
            pending.pop_front();
        }
    }

    fn failed(&self, n: u64, e: Error) {
        let mut st = self.lock();
        self.counts.failed.fetch_add(n, Ordering::Release);
        st.error.get_or_insert(e);
    }
}
