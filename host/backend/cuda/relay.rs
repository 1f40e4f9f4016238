//! The host side of the relay (`device/src/relay.rs` has the protocol): small batches
//! are written inline into the mailbox's slots, every 8-byte word stamped with its
//! task's sequence number, with no driver call. Large ones, and resident lists, are
//! committed as runs that the relay passes on (`commit`, `RuntimeConfig::relay_publish`,
//! the default): then the relay is the only writer of `tail`. With `relay_publish` off
//! they go by copies on the transfer stream instead. Both publish `tail`, so the
//! producers (which call everything here in sequence order, one commit at a time:
//! host/queue/producer.rs) never let them overlap:
//! - before a copy publication, it waits until the relay has published every relayed
//!   batch (`mailbox.relayed`, the relay's release store after its `tail` stores);
//! - before a relayed publication that follows copies, it waits until the transfer
//!   stream is idle (the copies, `tail` included, have landed): the relay reads `tail`
//!   and skips past what the copies published.
//!
//! Both waits are short (microseconds: a copy or a relay round) and bounded: they end
//! with the other publisher's progress, with the relay kernel's death (`DeviceFault`,
//! `KernelExited`: polled every 100 µs), or after [`HANDOVER_TIMEOUT`].

use cudarc::driver::sys::CUfunction;
use resident_shared::lists::{COMPACT, IN_HOST, LIST_RUNS, ListRun};
use resident_shared::relay::{COMPACT_RUN, LL_SLOTS, LL_WORDS, RING_RUN, RelayMailbox, ll_word};
use resident_shared::{KernelParams, Task};

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::driver::context::Context;
use crate::driver::memory::PinnedAlloc;
use crate::driver::module::Module;
use crate::driver::stream::{Stream, StreamState, Transfer};
use crate::{Error, Result};

/// Longest wait for the other publisher, or for a free inline slot: generous, since
/// compute-sanitizer slows the relay warp by orders of magnitude.
const HANDOVER_TIMEOUT: Duration = Duration::from_secs(30);

/// Stamps repeat every 2^32 tasks, and the relay polls the slot of its next sequence
/// number even while batches go by copy. So every slot is rewritten with a stamp half a
/// wrap away from the live sequence numbers whenever `POISON_EVERY` tasks have been
/// published (either way) since the last rewrite: a slot then only holds stamps of
/// tasks less than `POISON_EVERY` plus one chunk old, or the far stamp, and none of
/// them is the stamp of a task the relay may look for.
const POISON_EVERY: u64 = 1 << 30;

// SAFETY: the function handle is immutable; the rest is Send + Sync.
unsafe impl Send for Relay {}
unsafe impl Sync for Relay {}

pub(crate) struct Relay {
    /// The `resident_relay` kernel and the stream it stays resident on.
    kernel: CUfunction,
    stream: Stream,
    mailbox: PinnedAlloc,
    /// Batches of at most this many tasks go through the relay inline (0: none do).
    max_batch: u32,
    /// The relay also publishes committed runs (step 7): large batches from the host
    /// ring and resident lists (`RuntimeConfig::relay_publish`).
    runs: bool,
    state: Mutex<State>,
    /// `State::poisoned_at` as last stored, read with no lock by run commits: a run
    /// commit takes the state's lock only when a rewrite is due (once in
    /// `POISON_EVERY` tasks), not per run (a line every producer would write).
    poisoned_hint: AtomicU64,
}

struct State {
    /// End of the last relayed batch not yet known to be published.
    relayed_end: Option<u64>,
    /// A copy publication may still be in flight on the transfer stream.
    copy_pending: bool,
    /// Where every slot was last rewritten with a far stamp.
    poisoned_at: u64,
}

impl Relay {
    /// `stream`: the one the relay warp stays resident on (the runtime's SM partition's,
    /// if it has one).
    pub fn new(ctx: &Context, stream: Stream, max_batch: u32, runs: bool, module: &Module) -> Result<Self> {
        if max_batch as usize > LL_SLOTS / 2 {
            return Err(Error::Config(format!("relay_max_batch must be at most {}", LL_SLOTS / 2)));
        }
        let mailbox = unsafe { PinnedAlloc::zeroed(ctx, size_of::<RelayMailbox>(), false) }?;
        let kernel = module.function("resident_relay")?;
        let this = Self {
            kernel,
            stream,
            mailbox,
            max_batch,
            runs,
            state: Mutex::new(State { relayed_end: None, copy_pending: false, poisoned_at: 0 }),
            poisoned_hint: AtomicU64::new(0),
        };
        // Zeroed words carry stamp 0, task 0's: poison before the relay starts.
        this.poison(0);
        Ok(this)
    }

    /// Launches the relay warp (after the persistent kernel), if the relay is enabled.
    pub fn launch(&self, params: &KernelParams) -> Result<()> {
        if !self.enabled() {
            return Ok(());
        }
        // SAFETY: the relay takes one `KernelParams`, the persistent kernel's, whose
        // memory outlives both kernels. Two warps: the relay and the inbox warp
        // (device/src/entry.rs).
        unsafe { crate::driver::launch::launch_1d(self.kernel, self.stream.raw(), 1, 64, 0, params, "cuLaunchKernel(resident_relay)") }
    }

    /// The relay kernel's stream: busy while it runs.
    pub fn state(&self) -> StreamState {
        if self.enabled() { self.stream.state() } else { StreamState::Idle }
    }

    /// The relay warp runs.
    pub fn enabled(&self) -> bool {
        self.max_batch > 0 || self.runs
    }

    /// The relay publishes committed runs (step 7).
    pub fn runs(&self) -> bool {
        self.runs
    }

    /// Device address of the mailbox, for the kernel parameters.
    pub fn device_ptr(&self) -> u64 {
        self.mailbox.device_ptr()
    }

    fn mailbox(&self) -> *mut RelayMailbox {
        self.mailbox.host_ptr() as *mut RelayMailbox
    }

    /// Whether a batch of `n` tasks goes through the relay.
    pub fn takes(&self, n: u64) -> bool {
        n <= self.max_batch as u64
    }

    /// Writes word `i` of every slot with the stamp of `seq + 2^31`: a stamp that no task
    /// in `[seq - 2^31, seq + 2^31)` has.
    fn poison(&self, seq: u64) {
        let m = self.mailbox();
        for slot in 0..LL_SLOTS {
            for w in 0..LL_WORDS {
                // SAFETY: in bounds; an aligned 8-byte store (see `write_slot`).
                unsafe { word(m, slot, w).store(ll_word(seq + (1 << 31), 0), Ordering::Relaxed) };
            }
        }
    }

    /// Publishes `tasks` (already placed), sequence numbers `first..`, through the relay.
    pub fn publish(&self, first: u64, tasks: &[Task], transfer: &Transfer) -> Result<()> {
        let mut s = self.state.lock().unwrap();
        if s.copy_pending {
            // Step 5 of the protocol: the copies, `tail` included, must have landed
            // before an inline slot after them can be taken.
            wait(
                || match transfer.state() {
                    StreamState::Idle => Ok(true),
                    StreamState::Busy => Ok(false),
                    StreamState::Failed(e) => Err(e),
                },
                || Ok(()),
            )?;
            s.copy_pending = false;
        }
        let end = first + tasks.len() as u64;
        self.maybe_poison(&mut s, first)?;
        // A slot is free once the relay has consumed the task `LL_SLOTS` before.
        self.wait_relayed((end).saturating_sub(LL_SLOTS as u64))?;
        let m = self.mailbox();
        for (i, t) in tasks.iter().enumerate() {
            let seq = first + i as u64;
            let slot = (seq % LL_SLOTS as u64) as usize;
            let payload: &[u32; LL_WORDS] = bytemuck::cast_ref(t);
            for (w, &v) in payload.iter().enumerate() {
                // Step 1: a single-copy-atomic 8-byte store per word (x86-64: a plain
                // aligned `mov`); the stamp makes each word valid on its own, so the
                // words need no order among themselves and no flag after them.
                unsafe { word(m, slot, w).store(ll_word(seq, v), Ordering::Relaxed) };
            }
        }
        s.relayed_end = Some(end);
        Ok(())
    }

    /// Tells the relay where the host ring lies (before it starts): runs over the ring
    /// carry no address.
    pub fn set_host_ring(&self, addr: u64) {
        // SAFETY: the live mailbox; written before the relay is launched (the launch
        // orders it before the relay's reads).
        unsafe { (*self.mailbox()).host_ring = addr };
    }

    /// Whether a commit at `first` rewrites the slots first (`maybe_poison`), which may
    /// wait on the relay and query a stream: a driver call, for which the caller binds
    /// the context (a run commit otherwise makes none).
    pub fn poison_due(&self, first: u64) -> bool {
        // Relaxed: `poisoned_at` only grows, and commits come in sequence order, so a
        // hint that lags only says yes once more, and the lock in `maybe_poison`'s
        // callers decides.
        first.saturating_sub(self.poisoned_hint.load(Ordering::Relaxed)) >= POISON_EVERY
    }

    /// Commits run `first..end` (step 7): its tasks lie at `from` (device address, in
    /// a resident list, or with `lists::IN_HOST` in the host ring at the slots of
    /// `first..end`), described by mailbox entry `entry`, which the relay copies into
    /// the device's table before it publishes `tail` over the run.
    ///
    /// # Safety
    /// Commits come one at a time, in sequence order (the publisher's lock,
    /// host/queue/publisher.rs); the entry is
    /// free (its last run completed); `from..` holds `end - first` placed tasks, written
    /// before this call (any memory type: the fence below orders write-combined stores
    /// too), and stays live until they complete.
    pub unsafe fn commit(&self, first: u64, end: u64, from: u64, entry: usize) -> Result<()> {
        assert!(entry < LIST_RUNS);
        if self.poison_due(first) {
            let mut s = self.state.lock().unwrap();
            self.maybe_poison(&mut s, first)?;
        }
        let m = self.mailbox();
        let in_ring = from & IN_HOST != 0;
        let mut span = ListRun::new(first as u32, (end - first) as u32, 0).span;
        // SAFETY: the live mailbox; aligned 8-byte words the relay reads concurrently
        // (it takes an entry only once its `span` names the run it waits for).
        unsafe {
            if in_ring {
                span |= RING_RUN;
                if from & COMPACT != 0 {
                    span |= COMPACT_RUN;
                }
            } else {
                AtomicU64::from_ptr(&raw mut (*m).runs[entry].addr).store(from, Ordering::Relaxed);
            }
            // Orders every earlier store (the run's tasks, also in write-combined
            // memory, which x86's ordering leaves out; the entry's `addr`) before the
            // `span`, which commits the run: a release store, paired with the relay's
            // relaxed load of it followed by `fence.acq_rel.sys` (device/src/relay.rs,
            // step 7).
            std::sync::atomic::fence(Ordering::SeqCst);
            AtomicU64::from_ptr(&raw mut (*m).runs[entry].span).store(span, Ordering::Release);
        }
        Ok(())
    }

    /// After an idle exit (no kernel runs, every task reserved so far completed): the
    /// mailbox and this side's state as a relaunch resumes from them, at sequence number
    /// `next` with `runs` list runs published (host/runtime/residency.rs, step 3).
    pub fn resume(&self, next: u64, runs: u64) {
        let mut s = self.state.lock().unwrap();
        s.relayed_end = None;
        s.copy_pending = false;
        let m = self.mailbox();
        // SAFETY: the live mailbox; no relay runs, and the launch orders these stores
        // before its reads.
        unsafe {
            AtomicU64::from_ptr(&raw mut (*m).abort).store(0, Ordering::Relaxed);
            AtomicU64::from_ptr(&raw mut (*m).resume_next).store(next, Ordering::Relaxed);
            AtomicU64::from_ptr(&raw mut (*m).resume_runs).store(runs, Ordering::Relaxed);
            AtomicU64::from_ptr(&raw mut (*m).relayed).store(next, Ordering::Release);
        }
    }

    /// Open peer links into the runtime, for the relay (`RelayMailbox::peers`): it looks
    /// at inboxes only while there are any. Relaxed: a hint the relay reads nothing
    /// through.
    pub fn add_peers(&self, delta: i64) {
        if self.enabled() {
            // SAFETY: the live mailbox; an aligned 8-byte word the relay only reads.
            unsafe { AtomicU64::from_ptr(&raw mut (*self.mailbox()).peers) }.fetch_add(delta as u64, Ordering::Relaxed);
        }
    }

    /// Open peer links into the runtime, as `add_peers` counted them (0 without a relay).
    pub fn peers(&self) -> u64 {
        if !self.enabled() {
            return 0;
        }
        // SAFETY: as in `add_peers`. Relaxed: a count this thread or another changed
        // under the peer link's own locks; nothing is read through it.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.mailbox()).peers) }.load(Ordering::Relaxed)
    }

    /// Time slices the relay has seen other contexts take (`RelayMailbox::slices`) and
    /// the last one's length in nanoseconds; zero without a relay. Relaxed: pairs with
    /// the relay's relaxed `.sys` stores; a hint, nothing is read through it.
    pub fn slices(&self) -> (u64, u64) {
        if !self.enabled() {
            return (0, 0);
        }
        // SAFETY: the live mailbox; aligned 8-byte words only the relay writes.
        unsafe {
            let m = self.mailbox();
            (
                AtomicU64::from_ptr(&raw mut (*m).slices).load(Ordering::Relaxed),
                AtomicU64::from_ptr(&raw mut (*m).slice_ns).load(Ordering::Relaxed),
            )
        }
    }

    /// Asks the relay to abort the workers (device/src/relay.rs, step 6). Relaxed: the
    /// relay reads the word with `ld.relaxed.sys` and reads nothing through it.
    pub fn ask_abort(&self) {
        if self.enabled() {
            // SAFETY: the live mailbox; an aligned 8-byte word the relay only reads.
            unsafe { AtomicU64::from_ptr(&raw mut (*self.mailbox()).abort) }.store(1, Ordering::Relaxed);
        }
    }

    /// How far the relay has consumed and published (acquire: pairs with its
    /// `st.release.sys`, step 4).
    pub fn relayed(&self) -> u64 {
        unsafe { AtomicU64::from_ptr(&raw mut (*self.mailbox()).relayed) }.load(Ordering::Acquire)
    }

    /// Waits until the relay has consumed everything before `target`; fails if the
    /// relay kernel is gone.
    fn wait_relayed(&self, target: u64) -> Result<()> {
        wait(
            || Ok(self.relayed() >= target),
            || match self.stream.state() {
                StreamState::Busy => Ok(()),
                StreamState::Idle => Err(Error::KernelExited),
                StreamState::Failed(e) => Err(Error::DeviceFault(e.to_string())),
            },
        )
    }

    /// Before a copy publication of tasks from `first` on: waits until the relay has
    /// published everything relayed so far.
    pub fn before_copy(&self, first: u64) -> Result<()> {
        let mut s = self.state.lock().unwrap();
        if let Some(end) = s.relayed_end {
            self.wait_relayed(end)?;
            s.relayed_end = None;
        }
        self.maybe_poison(&mut s, first)?;
        s.copy_pending = true;
        Ok(())
    }

    /// Rewrites every slot far away when `POISON_EVERY` tasks have passed, once the
    /// relay has consumed every inline batch (nothing pending is erased). Safe while the
    /// relay polls: it looks only for tasks within a few slots of `first`, and the far
    /// stamp is 2^31 away from those.
    fn maybe_poison(&self, s: &mut State, first: u64) -> Result<()> {
        if first - s.poisoned_at >= POISON_EVERY {
            if let Some(end) = s.relayed_end {
                self.wait_relayed(end)?;
            }
            self.poison(first);
            s.poisoned_at = first;
            self.poisoned_hint.store(first, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// Word `w` of inline slot `slot`, as an atomic (the device reads it concurrently).
///
/// # Safety
/// `m` must be the live mailbox; `slot < LL_SLOTS`, `w < LL_WORDS`.
unsafe fn word<'a>(m: *mut RelayMailbox, slot: usize, w: usize) -> &'a AtomicU64 {
    unsafe { AtomicU64::from_ptr(&raw mut (*m).slots[slot].words[w]) }
}

/// Spins (then yields) until `done` holds; fails when `alive` does (polled every
/// 100 µs), or with `Timeout` after [`HANDOVER_TIMEOUT`].
fn wait(mut done: impl FnMut() -> Result<bool>, alive: impl Fn() -> Result<()>) -> Result<()> {
    let start = Instant::now();
    let mut polled = start;
    loop {
        if done()? {
            return Ok(());
        }
        let now = Instant::now();
        let waited = now - start;
        if waited > HANDOVER_TIMEOUT {
            return Err(Error::Timeout);
        }
        if now - polled > Duration::from_micros(100) {
            polled = now;
            alive()?;
        }
        if waited < Duration::from_micros(20) {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}
