//! The completion tracker: polls the segment records (`resident_shared::segment`) in
//! sequence order, hands each finished segment to the ticket that owns it, and
//! publishes how far everything is complete.
//!
//! Any thread that waits drives the scan (`try_lock`: one scanner at a time; the others
//! read `completed`). No background thread is needed, and a waiter sees its batch
//! complete as soon as the device's write of its last segment record lands.

use resident_shared::{Completion, Status, spent_stamp, stamp_for};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use crate::util::sync::Mutex;
use crate::util::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::registrations::Registrations;
use super::ticket_state::TicketState;
use crate::Error;
use crate::backend::Backend;

/// How long the oldest unfinished ticket must have been stuck before the scan looks at
/// the tickets behind it too (each costs one record read per poll).
const OUT_OF_ORDER_AFTER: Duration = Duration::from_micros(200);

/// Most tickets behind a stuck one that one scan reads (round robin over calls).
const OUT_OF_ORDER_BUDGET: usize = 64;

/// How far (in tasks) `completed` may lag behind a ticket its waiter settled before
/// the waiter scans ([`CompletionTracker::nudge`]): sixteen runs of 256, a quarter of
/// the run table's 64 entries, so that entries come free long before a producer needs
/// them; four of the largest segments.
const NUDGE_LAG: u64 = 4 * resident_shared::segment::SEGMENT as u64;

/// Most segments of a ticket whose waiter reads its records itself
/// ([`CompletionTracker::settle_own`]): a larger one leaves it to the scan, which reads
/// each record once as it completes, not at every poll.
const OWN_SEGMENTS: u64 = 4;

pub(crate) struct CompletionTracker {
    scan: Mutex<Scan>,
    /// Tickets registered since the last scan took them: producers push there with no
    /// lock, right after their reservations (so in sequence order but for reservations
    /// made side by side; a take sorts them) (host/queue/registrations.rs), and a scan takes them
    /// under `scan`, so a registration never waits for a scan under way, and a poll
    /// with nothing registered reads one word.
    incoming: Registrations,
    /// A thread holds `scan` in [`advance`](Self::advance) (a hint for the others).
    scanning: AtomicBool,
    /// Every task before this sequence number has completed and its record was read;
    /// its ring slot (and completion slot) may be reused.
    completed: AtomicU64,
    /// Tasks per segment (`segment::segment_size` of the ring).
    segment: u32,
    /// Slots in the ring.
    capacity: u64,
}

struct Scan {
    prefix: u64,
    /// Tickets in sequence order, each with how far its segments were found done;
    /// together they cover every published slot.
    tickets: VecDeque<(Arc<TicketState>, u64)>,
    /// When the oldest unfinished work last made progress: the prefix moved, or a
    /// ticket arrived at an empty queue. The watchdog's clock (`host/runtime/watchdog.rs`).
    moved_at: Instant,
    /// Where the next out-of-order scan starts among the tickets behind the first
    /// unfinished one.
    rotor: usize,
    /// Room for the tickets a scan takes from the registrations (kept: no allocation
    /// per take).
    taken: Vec<Arc<TicketState>>,
    /// `fail_all` has run: tickets taken from now on were pushed after the close.
    closed: bool,
}

impl Scan {
    /// Moves the tickets just taken into `taken` to the end of the scan's (the caller
    /// holds `scan`), keeping `taken`'s room for the next take. After the close they
    /// were pushed after it and failed by their pushers (`Registrations::push`):
    /// nothing to track (their tasks may never complete, and a scan must not finish a
    /// ticket its pusher fails).
    fn append_taken(&mut self) {
        if self.closed {
            self.taken.clear();
        }
        if self.taken.is_empty() {
            return;
        }
        if self.tickets.is_empty() {
            self.moved_at = Instant::now();
        }
        // Taken in sequence order, but a ticket reserved before one taken earlier may
        // come only now (registrations are pushed outside the producer lock): it goes
        // into place, among the last few tickets. (`rotor` indexes the tickets behind
        // the front: any value is a start.)
        for t in self.taken.drain(..) {
            let (key, first) = ((t.first, t.end), t.first);
            match self.tickets.back() {
                Some((b, _)) if (b.first, b.end) > key => {
                    let at = self.tickets.partition_point(|(x, _)| (x.first, x.end) <= key);
                    self.tickets.insert(at, (t, first));
                }
                _ => self.tickets.push_back((t, first)),
            }
        }
    }
}

impl CompletionTracker {
    /// A tracker for a ring of `capacity` slots, in segments of at most `max_segment`
    /// tasks (and at most half the ring: `segment::segment_size`).
    pub fn new(capacity: u32, max_segment: u32) -> Self {
        Self {
            scan: Mutex::new(Scan {
                prefix: 0,
                tickets: VecDeque::new(),
                moved_at: Instant::now(),
                rotor: 0,
                taken: Vec::new(),
                closed: false,
            }),
            incoming: Registrations::default(),
            scanning: AtomicBool::new(false),
            completed: AtomicU64::new(0),
            segment: resident_shared::segment::segment_size(capacity).min(max_segment),
            capacity: capacity as u64,
        }
    }

    pub fn segment_size(&self) -> u32 {
        self.segment
    }

    /// Registers a ticket before its tasks are published (else the scan could pass
    /// them with no owner). Called right after the reservation, outside the producer
    /// lock: tickets of reservations made side by side may come in either order.
    ///
    /// Into `incoming`, which every reader of the scan's tickets takes first
    /// ([`Self::take_incoming`]): a ticket not taken yet holds back `completed` all the
    /// same, since the scan moves `completed` only through tickets it has, and stops at
    /// a gap between them ([`Self::settled`] too).
    pub fn register(&self, t: &Arc<TicketState>) {
        self.incoming.push(t);
    }

    /// Moves the registrations since the last call to the end of the scan's tickets
    /// (the caller holds the scan's lock).
    fn take_incoming(&self, scan: &mut Scan) {
        self.incoming.take_into(&mut scan.taken);
        scan.append_taken();
    }

    /// The first unfinished task and how long ago the oldest unfinished work last made
    /// progress (as seen by the scans so far); `None` when nothing is outstanding.
    pub fn stalled(&self) -> Option<(u64, Duration)> {
        let mut scan = self.scan.lock().unwrap();
        self.take_incoming(&mut scan);
        scan.tickets.front()?;
        // Every task before the prefix is done, and the one at it is not (its ticket's,
        // or one whose ticket is not registered yet).
        Some((scan.prefix, scan.moved_at.elapsed()))
    }

    pub fn completed(&self) -> u64 {
        // Acquire: pairs with the release in `advance`; whoever sees `completed >= s`
        // also sees the scanner's reads of the records before `s` done.
        self.completed.load(Ordering::Acquire)
    }

    /// Reads every newly completed segment; returns the new `completed`. Tickets are
    /// resolved as soon as their own segments are done, in any order: a ticket behind
    /// one that is stuck (a task waiting on a counter nobody signals yet, a long task)
    /// resolves all the same, once the front has been stuck for `OUT_OF_ORDER_AFTER`
    /// (before that, only the front is scanned: in-order completion, one record read
    /// per poll; after it, `OUT_OF_ORDER_BUDGET` tickets behind it a call, round robin).
    /// `completed`, which frees ring slots, still moves only in order.
    pub fn advance(&self, backend: &Backend) -> u64 {
        // A scan under way: its result, as a failed `try_lock` would give, with a load
        // of a line the scanner writes twice a scan instead of an RMW on the lock's
        // line by every waiter at every poll (test and test-and-set). Relaxed: a hint;
        // nothing is read through it.
        if self.scanning.load(Ordering::Relaxed) {
            return self.completed();
        }
        let Ok(mut scan) = self.scan.try_lock() else { return self.completed() };
        // Cleared on the way out, by unwinding too: a flag left set would stop every
        // scan but `advance_all`'s.
        struct Scanning<'a>(&'a AtomicBool);
        impl Drop for Scanning<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Relaxed);
            }
        }
        self.scanning.store(true, Ordering::Relaxed);
        let _scanning = Scanning(&self.scanning);
        self.scan_locked(backend, &mut scan)
    }

    /// [`advance`](Self::advance), waiting for a scan under way instead of skipping:
    /// for the last scan before `fail_all` once the workers have left, which must read
    /// every record they wrote (a scan that another thread started before they left may
    /// have read a record before its last write).
    pub fn advance_all(&self, backend: &Backend) -> u64 {
        let mut scan = self.scan.lock().unwrap();
        self.scan_locked(backend, &mut scan)
    }

    fn scan_locked(&self, backend: &Backend, scan: &mut Scan) -> u64 {
        self.take_incoming(scan);
        let beyond = scan.moved_at.elapsed() >= OUT_OF_ORDER_AFTER;
        let old = scan.prefix;
        let mut prefix = old;
        let n = scan.tickets.len();
        // In order, from the front, up to the first ticket not done, or a gap: tasks
        // reserved whose ticket is not registered yet (it is pushed after the producer
        // lock; nothing of it is published before, so nothing past the gap is either).
        let mut i = 0;
        while i < n {
            let (t, cursor) = &mut scan.tickets[i];
            if t.first > prefix {
                break;
            }
            let seg = self.scan_ticket(backend, old, t, cursor);
            // (`max`: an empty ticket `[x, x)` reserved beside the batch that starts
            // at `x` may come after it.)
            prefix = prefix.max(seg);
            i += 1;
            if seg != t.end {
                break;
            }
        }
        // Behind it, once it has been stuck a while: at most `OUT_OF_ORDER_BUDGET`
        // tickets a call, round robin, so that a poll stays cheap however many wait.
        if beyond && i < n {
            let rest = n - i;
            let k = OUT_OF_ORDER_BUDGET.min(rest);
            for j in 0..k {
                let (t, cursor) = &mut scan.tickets[i + (scan.rotor + j) % rest];
                self.scan_ticket(backend, old, t, cursor);
            }
            scan.rotor = (scan.rotor + k) % rest;
        }
        if prefix != scan.prefix {
            scan.prefix = prefix;
            scan.moved_at = Instant::now();
        }
        // A ticket's slots are free once it and every one before it are done: it lies
        // below the prefix (a done ticket behind a gap stays until the gap's ticket is
        // registered and done: the prefix moves only through tickets the scan has).
        while scan.tickets.front().is_some_and(|(t, c)| t.end <= scan.prefix && *c == t.end && t.is_done()) {
            scan.tickets.pop_front();
            scan.moved_at = Instant::now();
        }
        // Release: see `completed`. Stored only when it moved (this scan is its only
        // writer): every producer reads the line for room, and a store of the same
        // value would take it from all of them.
        if self.completed.load(Ordering::Relaxed) != scan.prefix {
            self.completed.store(scan.prefix, Ordering::Release);
        }
        scan.prefix
    }

    /// Reads ticket `t`'s newly completed segments from `cursor` on (and its express
    /// record), resolving it once all are; returns the new cursor. `prefix`: what the
    /// scans had seen complete in order before this call.
    fn scan_ticket(&self, backend: &Backend, prefix: u64, t: &TicketState, cursor: &mut u64) -> u64 {
        // Settled by its waiter from the same records, all complete and none failed
        // (`settle_own`): nothing to read. `is_done`'s acquire pairs with the waiter's
        // release in `finish`, after its acquires of the records, so what the device
        // wrote before them is visible here too, for the `completed` this scan stores.
        if t.is_done() && t.clean.load(Ordering::Relaxed) {
            *cursor = t.end;
            return t.end;
        }
        // Only once the slot's previous task (`first - capacity`) has completed, as the
        // prefix says: its record may be written until then (a plain store, which this
        // load must not race), and this ticket is not published yet.
        if t.express && !t.is_done() && t.first < prefix + self.capacity {
            read_express(backend, t);
        }
        // Segments are cut from the ticket's start, and a cursor only stops at a
        // segment's end: `seg` is always a segment's first task.
        let mut seg = (*cursor).max(t.first);
        while seg < t.end {
            let end = (seg + self.segment as u64).min(t.end);
            let d = backend.segment_done(seg);
            // Acquire: pairs with the finishing worker's fence.acq_rel.sys +
            // st.relaxed.sys of `stamp` (device/src/completion.rs, step 5), or the CPU
            // worker's fence(AcqRel) + relaxed store. After it, `failed`, the segment's
            // per-task records and every write of its tasks are visible.
            let stamp = unsafe { AtomicU32::from_ptr(&raw const (*d).stamp as *mut u32) }.load(Ordering::Acquire);
            if stamp != stamp_for(seg as u32) {
                break;
            }
            let failed = unsafe { std::ptr::read_volatile(&raw const (*d).failed) };
            // An express ticket may be done already, from its task's record (which holds
            // the outcome: the segment's `failed` does not count a task the relay ran).
            if (failed != 0 || t.keep_results) && !t.is_done() {
                read_records(backend, t, seg, end, failed);
            }
            seg = end;
        }
        *cursor = seg;
        if seg == t.end && !t.is_done() {
            t.finish();
        }
        seg
    }

    /// Whether ticket `t` is done as its own segment records say, marking it done if
    /// so: for its waiter, which then needs no scan (no scanner's lock, and none of the
    /// records of the tickets before it: under four producers a wait cost 0.53 µs a
    /// batch against 0.18 for one, measured with the `phase-timing` build). Only for a
    /// ticket whose records need nothing read but their stamps: a few segments, no
    /// inline results, not express, and no failure (a failed segment is left to the
    /// scan, which names the task). The scan still passes the ticket in order, to move
    /// `completed`; it skips the records of a ticket settled so (`clean`).
    pub fn settle_own(&self, backend: &Backend, t: &TicketState) -> bool {
        if t.keep_results || t.express || t.end - t.first > OWN_SEGMENTS * self.segment as u64 {
            return false;
        }
        // Segments are cut from the ticket's start (`scan_ticket`).
        let mut seg = t.first;
        while seg < t.end {
            let d = backend.segment_done(seg);
            // SAFETY: the record of a segment of this published ticket, in the live
            // ring; the device writes it, so both words are read as atomics, never
            // through references (`failed` too: once a scan has passed this ticket its
            // slot may be reused and written under this read; then `clean` only lands
            // on a ticket already resolved, which nothing reads again). Acquire: pairs
            // as in `scan_ticket` (the finishing worker's fence.acq_rel.sys + stamp), so
            // `failed` and every write of the segment's tasks are visible after it.
            let stamp = unsafe { AtomicU32::from_ptr(&raw const (*d).stamp as *mut u32) }.load(Ordering::Acquire);
            if stamp != stamp_for(seg as u32)
                || unsafe { AtomicU32::from_ptr(&raw const (*d).failed as *mut u32) }.load(Ordering::Relaxed) != 0
            {
                return false;
            }
            seg += self.segment as u64;
        }
        t.settle_clean();
        true
    }

    /// A scan if `completed` lags more than [`NUDGE_LAG`] tasks behind `end` (the end
    /// of a ticket its waiter just settled itself) and no scan is under way: keeps
    /// `completed` moving in small steps while waiters settle their own tickets, so
    /// that producers find their room without scanning. Without it the scans came in
    /// bursts, when a run-table entry's room ran out, with every producer waiting
    /// behind the one that scanned (room 0.86 µs a batch under four producers x 256).
    pub fn nudge(&self, backend: &Backend, end: u64) {
        if self.completed() + NUDGE_LAG < end {
            self.advance(backend);
        }
    }

    /// Whether every ticket that holds a task of `from..to` is done (as far as the scans
    /// so far saw: call [`CompletionTracker::advance`] first).
    pub fn settled(&self, from: u64, to: u64) -> bool {
        if self.completed() >= to {
            return true;
        }
        let mut scan = self.scan.lock().unwrap();
        self.take_incoming(&mut scan);
        if scan.closed {
            // `fail_all` resolved every ticket, and fails every later one as it comes.
            return true;
        }
        // Every task before `scan.prefix` is done; past it the tickets must cover
        // `from..to` without a gap (a reservation whose ticket is not registered yet).
        let mut covered = scan.prefix.max(from);
        for (t, _) in scan.tickets.iter().take_while(|(t, _)| t.first < to) {
            if t.first > covered || !(t.end <= from || t.is_done()) {
                return false;
            }
            covered = covered.max(t.end);
        }
        covered >= to
    }

    /// Resolves every unfinished ticket with `error` (fault or abort), and every ticket
    /// registered from now on: no waiter hangs. The first error sticks.
    pub fn fail_all(&self, error: &Error) {
        let mut scan = self.scan.lock().unwrap();
        // Closed under the scan's lock (which every take holds): a registration after
        // the close fails at once, one before it is taken here.
        self.incoming.close(error, &mut scan.taken);
        scan.append_taken();
        scan.closed = true;
        for (t, _) in scan.tickets.drain(..) {
            t.fail(error.clone());
        }
    }
}

/// An express ticket (one task, `task_flags::EXPRESS`): done once its task's record is
/// written, whoever ran it (the relay warp or a worker). Its ring slot is still counted
/// in its segment, which the scan waits for as usual before it moves `completed`.
fn read_express(backend: &Backend, t: &TicketState) {
    let rec = backend.completion(t.first);
    // SAFETY (both blocks): `rec` is the ticket's slot of the live completion ring (mapped
    // pinned memory, or host memory on the CPU backend), which stays its own until the
    // scan moves `completed` past it; the device writes it, so it is read as atomics or
    // volatile, never through references. Acquire: pairs with the fence.acq_rel.sys + st.relaxed.sys of `stamp` by the relay
    // (device/src/relay.rs, step 3b) or the worker (`Completer::record`, device/src/completion.rs);
    // after it, `status`, `result` and the task's writes are visible.
    let stamp_at = unsafe { AtomicU32::from_ptr(&raw const (*rec).stamp as *mut u32) };
    if stamp_at.load(Ordering::Acquire) != stamp_for(t.first as u32) {
        return;
    }
    let (status, result) =
        unsafe { (std::ptr::read_volatile(&raw const (*rec).status), std::ptr::read_volatile(&raw const (*rec).result)) };
    // Read: never valid again (see `advance`); the task wrote its record once.
    stamp_at.store(spent_stamp(t.first as u32), Ordering::Relaxed);
    let mut o = t.outcome.lock().unwrap();
    if status != 0 && o.failure.is_none() {
        o.failure = Some((t.first, Status::from_u32(status).unwrap_or(Status::BadArgs)));
    }
    if t.keep_results {
        o.results.push(result);
    }
    drop(o);
    t.finish();
}

/// Reads the per-task records of a finished segment `seg..end` (ordered by the acquire
/// of its segment record): results if the ticket keeps them, and the first failure.
fn read_records(backend: &Backend, t: &TicketState, seg: u64, end: u64, failed: u32) {
    let mut failure = None;
    let mut in_slot = 0;
    let mut results = Vec::new();
    for seq in seg..end {
        let at = backend.completion(seq) as *mut Completion;
        // SAFETY: the record of a task of this finished segment, acquired with it; the
        // workers write it again only for a task published after `completed` passes it.
        let rec = unsafe { std::ptr::read_volatile(at) };
        // Written only for failed tasks and RESULT tasks; a stale stamp means "not
        // written", i.e. the task succeeded.
        let written = rec.stamp == stamp_for(seq as u32);
        if written {
            // Read: never valid again (see `advance`).
            unsafe { std::ptr::write_volatile(&raw mut (*at).stamp, spent_stamp(seq as u32)) };
        }
        if written && rec.status != 0 && failure.is_none() {
            failure = Some((seq, Status::from_u32(rec.status).unwrap_or(Status::BadArgs)));
            // A list chunk's record holds the failed task's place in the chunk
            // (device/src/worker.rs, `run`).
            in_slot = if t.per_slot > 1 { rec.result.min(t.per_slot as u64 - 1) } else { 0 };
        }
        if t.keep_results {
            results.push(if written { rec.result } else { 0 });
        }
    }
    if failed != 0 && failure.is_none() {
        // Only children of the segment's tasks failed: they have no record of their own.
        failure = Some((seg, Status::ChildFailed));
    }
    let mut o = t.outcome.lock().unwrap();
    o.results.extend_from_slice(&results);
    if o.failure.is_none() {
        o.failure = failure;
        o.failure_in_slot = in_slot;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Tickets registered out of order (reservations side by side): `settled` says
    /// nothing before `to` is settled while a reserved range has no ticket yet, and the
    /// tickets end up in sequence order.
    #[test]
    fn settled_waits_for_a_gap() {
        let tracker = CompletionTracker::new(64, 32);
        let t = |first| Arc::new(TicketState::new(first, first + 1, false, false));
        let (a, b, c) = (t(0), t(1), t(2));
        tracker.register(&a);
        tracker.register(&c);
        a.finish();
        c.finish();
        assert!(tracker.settled(0, 1));
        assert!(!tracker.settled(0, 3), "task 1 is reserved, its ticket not registered");
        assert!(tracker.settled(2, 3));
        tracker.register(&b);
        assert!(!tracker.settled(0, 3));
        b.finish();
        assert!(tracker.settled(0, 3));
        let scan = tracker.scan.lock().unwrap();
        assert!(scan.tickets.iter().map(|(t, _)| t.first).eq(0..3));
    }

    /// A CPU backend of 256 slots (one worker, which finds nothing published) and a
    /// tracker over it; its segment size.
    fn segments() -> (Backend, CompletionTracker, u64) {
        let config = crate::RuntimeConfig { capacity: 256, cpu_workers: 1, ..crate::RuntimeConfig::cpu() };
        let backend = Backend::Cpu(crate::backend::cpu::CpuBackend::new(&config.backend_settings()).unwrap());
        let tracker = CompletionTracker::new(256, 16);
        let s = tracker.segment_size() as u64;
        (backend, tracker, s)
    }

    /// Marks the segment that starts at `seg` completed, as its last worker would.
    fn segment_done(backend: &Backend, seg: u64) {
        let d = backend.segment_done(seg) as *mut resident_shared::SegmentDone;
        // SAFETY: a record of the ring's, which no worker writes (nothing is published).
        unsafe { AtomicU32::from_ptr(&raw mut (*d).stamp).store(stamp_for(seg as u32), Ordering::Release) };
    }

    /// A ticket done behind a gap (a reservation whose ticket is not registered yet)
    /// stays in the scan until the gap's ticket is done: popped early, it would leave a
    /// gap that never closes and `completed` stuck (eight producers x 256 hung so).
    /// The segments' records are written here as a worker would.
    #[test]
    fn done_behind_a_gap_waits_for_it() {
        let (backend, tracker, s) = segments();
        let t = |k: u64| Arc::new(TicketState::new(k * s, (k + 1) * s, false, false));
        let done = |k: u64| segment_done(&backend, k * s);
        let (a, b, c, d) = (t(0), t(1), t(2), t(3));
        tracker.register(&a);
        tracker.register(&c);
        tracker.register(&d);
        done(0);
        done(2);
        assert_eq!(tracker.advance(&backend), s, "the scan stops at the gap");
        // Past `OUT_OF_ORDER_AFTER`, the scan reads the tickets behind the gap too.
        std::thread::sleep(OUT_OF_ORDER_AFTER * 2);
        assert_eq!(tracker.advance(&backend), s);
        assert!(c.is_done(), "a ticket behind the gap resolves on its own");
        tracker.register(&b);
        done(1);
        done(3);
        assert_eq!(tracker.advance(&backend), 4 * s, "the prefix passes the gap once it is registered and done");
        assert!(b.is_done() && d.is_done());
    }

    /// An empty batch's ticket `[x, x)` registered after the batch that starts at `x`
    /// (both reserved side by side), before and after that batch left the scan: the
    /// prefix never moves back (it did, and stayed there: found in review).
    #[test]
    fn empty_ticket_after_its_neighbour() {
        let (backend, tracker, s) = segments();
        let t = |first: u64, end: u64| Arc::new(TicketState::new(first, end, false, false));
        let done = |k: u64| segment_done(&backend, k * s);
        let (f, e, g) = (t(0, s), t(0, 0), t(s, 2 * s));
        tracker.register(&f);
        tracker.register(&g);
        done(0);
        tracker.advance(&backend);
        tracker.register(&e);
        done(1);
        assert_eq!(tracker.advance(&backend), 2 * s);
        // And one that comes before its neighbour left the scan.
        let (f, e, g) = (t(2 * s, 3 * s), t(2 * s, 2 * s), t(3 * s, 4 * s));
        tracker.register(&f);
        tracker.register(&g);
        tracker.register(&e);
        done(2);
        done(3);
        for _ in 0..3 {
            assert_eq!(tracker.advance(&backend), 4 * s);
        }
        assert!([&e, &f, &g].iter().all(|t| t.is_done()));
    }
}

/// loom: a ticket registered while another thread fails every ticket (a fault or a
/// shutdown racing a submit) is resolved, with the error, in every interleaving: no
/// waiter is left hanging (the shipped tracker and ticket state, through host/util/sync.rs).
#[cfg(all(test, loom))]
mod loom_tracker {
    use super::*;
    use crate::Error;

    #[test]
    fn loom_a_ticket_registered_beside_fail_all_resolves() {
        loom::model(|| {
            let tracker = Arc::new(CompletionTracker::new(64, 32));
            let early = Arc::new(TicketState::new(0, 1, false, false));
            tracker.register(&early);
            let late = Arc::new(TicketState::new(1, 2, false, false));
            let h = {
                let tracker = tracker.clone();
                loom::thread::spawn(move || tracker.fail_all(&Error::ShutDown))
            };
            tracker.register(&late);
            h.join().unwrap();
            for t in [&early, &late] {
                assert!(t.is_done(), "a ticket left unresolved");
                assert_eq!(t.outcome.lock().unwrap().error, Some(Error::ShutDown));
            }
        });
    }
}
