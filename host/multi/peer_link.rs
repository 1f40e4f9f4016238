//! Peer links (docs/scaling.md, "The peer path"): a task of runtime A pushes a follow-up
//! task straight into an inbox in device B's memory, through peer access (NVLink or
//! PCIe), and B's inbox warp (its relay kernel's second warp) moves it into B's spawn
//! ring, where B's workers run it. No host thread is on the way. The device side: `resident_device::link` (the push, L1-L4
//! and its peer variant) and `resident_device::inbox` (the pop, I1-I4).
//!
//! What the host does:
//! P1. Make: both runtimes on CUDA devices with peer access (enabled here, A to B), the
//!     same task set (a pushed task is B's to run: its type must be the one A's task
//!     built), B's relay kernel on; the inbox is B's device memory with its inbound entry
//!     live (written before A's link entry names it, so before any push); B is held
//!     resident (no idle exit) while the link is open, since only its relay kernel
//!     (the inbox warp) drains.
//! P2. Count: B's workers add to the inbox's `done` and `failed` words, which B's inbox
//!     warp copies into mapped pinned memory (I5: read with no driver call; a
//!     synchronous device read when the relay kernel may have left); A's `enqueue` counter is the
//!     positions its pushes took (a synchronous device read).
//! P3. Flush: the positions taken so far (pushes by tasks whose tickets resolved are
//!     among them), then until `done` has counted as many. A push still waiting for
//!     room holds it back until it lands; a push of a task still running past the
//!     flush may be counted too.
//! P4. Close: A's entry loses its generation (later pushes fail with `BadLink`), then
//!     the tasks A had reserved by then complete (a push that read the entry before is
//!     done), then a flush; then B's hold ends and its relay stops draining the inbox.
//!     At most 10 s each for A's tasks and the flush, after which the close returns the
//!     flush's error (`Timeout`); the inbox is marked closed either way. A drop does the
//!     same on a thread of its own, without waiting.
//! P5. B closing or faulting: its inboxes are marked closed, and the entries of the
//!     links into it are cleared in their pushing runtimes (`Shared::cut_peers`: a
//!     faulted B's memory may not be writable), so pushes waiting for room fail with
//!     `BadLink`; a flush then reads B's counts once more from the device and reports
//!     `ShutDown` for what did not run. B cannot be parked for NCCL while a peer link
//!     into it is open (`Error::Config`): its inbox warp drains, and parking would cut its
//!     peer tasks short.
//! The inbox lives as long as the later of A's and B's backends (`CudaBackend::keep_inbox`).

use bytemuck::Zeroable;
use resident_shared::Status;
use resident_shared::link::{self, InboundEntry, LinkEntry, LinkId, PEER};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backend::cuda::peer::{self, Inbox};
use crate::multi::link::{Link, LinkStats, next_generation};
use crate::runtime::Shared;
use crate::{Error, Result, Runtime};

/// How long a close waits for the pushing runtime's tasks, and then for the flush.
const CLOSE_WAIT: Duration = Duration::from_secs(10);

/// A peer link's state, shared with a drop's closing thread.
struct Inner {
    from: Arc<Shared>,
    to: Arc<Shared>,
    id: LinkId,
    inbound: usize,
    inbox: Arc<Inbox>,
    stopped: AtomicBool,
    /// Failures reported by flushes so far (`failed`, as last seen).
    reported: Mutex<u64>,
    /// The hold on B and its inbound entry are given back once.
    released: AtomicBool,
}

pub(crate) struct PeerLink {
    /// Taken by `close` (then the drop does nothing).
    inner: Option<Arc<Inner>>,
}

impl Link {
    /// A link from runtime `from` to `to` that goes peer to peer: `from`'s tasks push
    /// (`TaskCx::push_to`, as for [`Link::new`]) straight into an inbox in `to`'s
    /// device memory, and `to`'s relay warp hands what they pushed to its workers; no
    /// host thread is on the way (docs/scaling.md). Needs two CUDA devices with peer
    /// access between them (enabled here), the same kernel image on both, and `to`'s
    /// relay warp: else [`Error::NoPeerPath`]. While the link is open `to` stays
    /// resident (no idle exit). A pushed task may not push children of its own
    /// (`Status::QueueFull`), and wait for or signal no counter; `to`'s host checks do
    /// not run on it (its slices are checked by `to`'s device as it runs). At most 16
    /// peer links into one runtime over its life.
    pub fn peer(from: &Runtime, to: &Runtime) -> Result<Link> {
        Link::peer_with_capacity(from, to, link::DEFAULT_OUTBOX)
    }

    /// [`Link::peer`] with an inbox of `capacity` slots (a power of two, 2 to
    /// 2^20).
    pub fn peer_with_capacity(from: &Runtime, to: &Runtime, capacity: u32) -> Result<Link> {
        if !capacity.is_power_of_two() || !(2..=1 << 20).contains(&capacity) {
            return Err(Error::Config(format!("link inbox capacity {capacity}: a power of two from 2 to 2^20")));
        }
        let (from, to) = (&from.shared, &to.shared);
        from.usable()?;
        to.usable()?;
        let no = |why: &str| Err(Error::NoPeerPath(why.to_string()));
        let (Some(a), Some(b)) = (from.backend.cuda(), to.backend.cuda()) else {
            return no("both runtimes must run on CUDA devices");
        };
        if a.context().ordinal() == b.context().ordinal() {
            return no("both runtimes are on the same device (a process holds one runtime per device)");
        }
        // The same image: the same types under the same ids (a hash of the ids alone
        // would let two sets with the same ids and other types confuse them).
        if from.config.image.fingerprint != to.config.image.fingerprint || from.config.image.ptx() != to.config.image.ptx() {
            return no("the two runtimes run different task sets (a pushed task runs as the receiver's type of its id)");
        }
        if !b.relay_enabled() {
            return no("the receiving runtime has no relay warp (relay_max_batch = 0), which drains peer inboxes");
        }
        if !peer::can_access(a.context(), b.context())? {
            return no("the driver reports no peer access from the first device to the second");
        }
        // P1.
        peer::enable_access(a.context(), b.context())?;
        let generation = next_generation()?;
        from.bind()?;
        // An index of the link table (its outbox, a few bytes, stays unused).
        let (index, _, _) = from.backend.new_outbox(128)?;
        to.bind()?;
        let (inbound, inbox) = b.new_inbox(capacity, a.context().ordinal())?;
        a.keep_inbox(inbox.clone());
        if let Err(e) = to.hold() {
            let _ = b.set_inbound(inbound, InboundEntry::zeroed());
            return Err(e);
        }
        b.add_peers(1);
        from.bind()?;
        to.remember_peer(from, index);
        let entry = LinkEntry { outbox: inbox.addr(), mask: (capacity - 1) | PEER, generation };
        if let Err(e) = from.backend.set_link_entry(index, entry, false) {
            b.add_peers(-1);
            to.forget_peer(from, index);
            to.unhold();
            let _ = b.set_inbound(inbound, InboundEntry::zeroed());
            return Err(e);
        }
        let inner = Arc::new(Inner {
            from: from.clone(),
            to: to.clone(),
            id: LinkId { index: index as u32, generation },
            inbound,
            inbox,
            stopped: AtomicBool::new(false),
            reported: Mutex::new(0),
            released: AtomicBool::new(false),
        });
        Ok(Link::of_peer(PeerLink { inner: Some(inner) }))
    }
}

impl Shared {
    /// Records a peer link from `from` (its link `index`) into this runtime.
    fn remember_peer(&self, from: &Arc<Shared>, index: usize) {
        self.elastic.peers_in.lock().unwrap_or_else(|e| e.into_inner()).push((Arc::downgrade(from), index));
    }

    fn forget_peer(&self, from: &Arc<Shared>, index: usize) {
        let mut v = self.elastic.peers_in.lock().unwrap_or_else(|e| e.into_inner());
        v.retain(|(w, i)| !(*i == index && std::ptr::eq(w.as_ptr(), Arc::as_ptr(from))));
    }

    /// This runtime is closing or has faulted (P5): the entries of the peer links into
    /// it are cleared in their pushing runtimes, so that pushes waiting for room end
    /// with `BadLink` (its own `closed` flags may not be writable after a fault).
    pub(crate) fn cut_peers(&self) {
        let v: Vec<_> = self.elastic.peers_in.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for (w, index) in v {
            if let Some(from) = w.upgrade() {
                let _ = from.bind();
                let _ = from.backend.set_link_entry(index, LinkEntry::EMPTY, true);
            }
        }
        let _ = self.bind();
    }
}

impl PeerLink {
    fn inner(&self) -> &Inner {
        self.inner.as_ref().expect("taken only by close, which consumes the link")
    }

    pub fn id(&self) -> LinkId {
        self.inner().id
    }

    pub fn stats(&self) -> Result<LinkStats> {
        self.inner().stats()
    }

    pub fn flush_until(&self, deadline: Option<Instant>) -> Result<LinkStats> {
        self.inner().flush_until(deadline)
    }

    /// (completed, failed), no driver call.
    pub fn done(&self) -> (u64, u64) {
        let (done, failed) = self.inner().done();
        (done.saturating_sub(failed), failed)
    }

    pub fn close(mut self) -> Result<LinkStats> {
        // This thread waits, not the drop's.
        let inner = self.inner.take().expect("a link is closed once");
        inner.close()
    }
}

impl Drop for PeerLink {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else { return };
        // P4 without waiting: the pushes stop now, the rest on a thread of its own.
        inner.stop();
        let name = format!("resident-peer-close-{}", inner.id.index);
        let closing = inner.clone();
        if std::thread::Builder::new().name(name).spawn(move || drop(closing.close())).is_err() {
            // No thread: give back the hold at once (what was pushed may be left).
            inner.release();
        }
    }
}

impl Inner {
    /// A's count of positions taken (P2: a synchronous device read).
    fn taken(&self) -> Result<u32> {
        // Both runtimes are CUDA ones (checked when the link was made).
        self.from.bind()?;
        self.from.backend.link_enqueued(self.id.index as usize)
    }

    /// (done, failed) as the receiver's relay last copied them (I5): no driver call.
    fn done(&self) -> (u64, u64) {
        self.inbox.done()
    }

    fn stats_of(&self, taken: u32, (done, failed): (u64, u64)) -> LinkStats {
        // `forwarded` counts 32-bit positions: the low half of the true count past 2^32.
        LinkStats { forwarded: taken as u64, completed: done.saturating_sub(failed), failed, backlog: 0 }
    }

    fn stats(&self) -> Result<LinkStats> {
        let taken = self.taken()?;
        Ok(self.stats_of(taken, self.done()))
    }

    /// Whether `done` has counted `target` positions (compared in 32 bits: positions
    /// wrap there, and are never 2^31 apart).
    fn reached(done: u64, target: u32) -> bool {
        (done as u32).wrapping_sub(target) as i32 >= 0
    }

    /// P3.
    fn flush_until(&self, deadline: Option<Instant>) -> Result<LinkStats> {
        let target = self.taken()?;
        let start = Instant::now();
        loop {
            let mut counts = self.done();
            let mut reached = Self::reached(counts.0, target);
            if !reached && (self.to.life.is_closing() || self.to.fault().is_err()) {
                // The receiver's relay may have left before it copied the last counts:
                // read them from the device once (a dead device: nothing more ran).
                let exact = match self.to.backend.cuda() {
                    Some(b) => self.to.bind().and_then(|()| b.inbox_counts(&self.inbox)),
                    None => Err(Error::ShutDown),
                };
                if let Ok(exact) = exact {
                    counts = exact;
                    reached = Self::reached(counts.0, target);
                }
                if !reached {
                    // P5: what it has not run now never runs; the receiver's fault if
                    // that is why (recorded, or only its backend's yet).
                    return Err(self.to.stopped());
                }
            }
            if reached {
                let taken = self.taken().unwrap_or(target);
                let mut reported = self.reported.lock().unwrap_or_else(|e| e.into_inner());
                let stats = self.stats_of(taken, counts);
                if counts.1 != *reported {
                    *reported = counts.1;
                    return Err(Error::TaskFailed { index: 0, seq: 0, status: Status::ChildFailed });
                }
                return Ok(stats);
            }
            // The pusher's end: a push an abort cut short leaves a position that is
            // never published, which no wait can see filled.
            self.from.fault()?;
            if self.from.is_aborted() {
                return Err(self.from.stopped());
            }
            if crate::util::deadline::passed(deadline) {
                return Err(Error::Timeout);
            }
            if start.elapsed() > Duration::from_micros(50) {
                std::thread::sleep(Duration::from_micros(20));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// P4, first step: pushes from now on fail with `BadLink`.
    fn stop(&self) {
        if !self.stopped.swap(true, Ordering::SeqCst) {
            let _ = self.from.bind();
            let _ = self.from.backend.set_link_entry(self.id.index as usize, LinkEntry::EMPTY, true);
        }
    }

    /// P4.
    fn close(&self) -> Result<LinkStats> {
        self.stop();
        // The tasks reserved before the stop: a push that read the entry is among them.
        let next = self.from.producer.lock().unwrap_or_else(|e| e.into_inner()).next;
        let since = Instant::now();
        while self.from.tracker.advance(&self.from.backend) < next
            && !self.from.is_aborted()
            && !self.from.workers_gone()
            && since.elapsed() < CLOSE_WAIT
        {
            std::thread::sleep(Duration::from_micros(50));
        }
        let r = self.flush_until(crate::util::deadline::after(CLOSE_WAIT));
        self.release();
        r
    }

    /// Ends B's hold and its relay's draining of the inbox (once).
    fn release(&self) {
        if self.released.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(b) = self.to.backend.cuda() {
            let _ = self.to.bind();
            // Closed first: a push of a task still running past the close (beyond
            // CLOSE_WAIT) fails rather than waiting for a relay that stopped looking.
            let _ = self.inbox.close(b);
            let e = InboundEntry { inbox: self.inbox.addr(), mask: self.inbox.capacity() - 1, live: 0 };
            let _ = b.set_inbound(self.inbound, e);
            b.add_peers(-1);
        }
        self.to.forget_peer(&self.from, self.id.index as usize);
        self.to.unhold();
    }
}
