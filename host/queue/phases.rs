//! Where a submission's time goes, phase by phase, on the thread that submits (cargo
//! feature `phase-timing`, off by default: without it every call here is empty). Each
//! thread accumulates into its own counters and adds them to the process's totals every
//! 256 laps, so that producers do not share a cache line per stamp. For profiling runs
//! only (the streaming bench prints them when built with the feature); speeds are the
//! benches' business.

/// A phase of `submit` (and of a blocking wait).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "phase-timing"), allow(dead_code))]
pub(crate) enum Phase {
    /// The checks before any lock: closed, open reservation, kernel out, health, bind.
    Pre,
    /// Taking the registries' read lock.
    ReadLock,
    /// Checking the batch (serially, or on the helpers).
    Check,
    /// Taking the producer lock.
    ProducerLock,
    /// The reservation under it: residency, plan, the ticket's allocation.
    Reserve,
    /// The ticket's registration with the completion tracker (still under it).
    Register,
    /// Waiting for a piece's room.
    Room,
    /// Staging a piece into the ring.
    Stage,
    /// Committing a piece (publication, or the hand-off to the publisher).
    Commit,
    /// A large batch's pass on the helpers (checks, then staging of pieces with room).
    Pass,
    /// Publishing what the pass left (pieces with no room yet).
    Rest,
    /// A blocking `Ticket::wait`.
    Wait,
    /// From the last phase of `submit` to the ticket made (`Runtime::submit`: its
    /// `Arc<Shared>` clone).
    Ticket,
    /// From the end of a blocking wait to this thread's next `submit`: the waited
    /// ticket's drop, and the caller's own work between (the streaming bench: its
    /// queue of tickets).
    Between,
    /// In a large batch's pass, from its start (on the caller) to when a thread of it
    /// (the caller or a helper) began: the pool's wake-up. One lap per thread.
    PassJoined,
    /// ... to when that thread found no part left to check.
    PassChecked,
    /// ... to when it saw every part checked (the barrier).
    PassBarrier,
    /// ... to when it found no piece left to stage and commit.
    PassStaged,
    /// ... to when the batch's first piece was committed (once a pass).
    PassFirstCommit,
    /// ... to when the first part's check ended (once a pass).
    PassFirstChecked,
    /// ... to when the first piece was staged (once a pass).
    PassFirstStaged,
    /// How long the caller took to hand the helpers their jobs (`Helpers::run`).
    PassSpawned,
    /// A join with a partner (host/queue/partners.rs): the caller's own half.
    HalfOwn,
    /// ... then its wait for the partner's half (or its run of the half it took back).
    HalfWait,
    /// ... the partner's half, on the partner (flushed every 256 laps).
    HalfPartner,
    /// A join that found no partner free (a count: laps of no time).
    HalfAlone,
    /// A join whose half was taken back unrun (a count).
    HalfBack,
}

#[cfg(feature = "phase-timing")]
mod imp {
    use super::Phase;
    use std::cell::{Cell, RefCell};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Instant;

    const N: usize = Phase::HalfBack as usize + 1;
    const NAMES: [&str; N] = [
        "pre",
        "read_lock",
        "check",
        "producer_lock",
        "reserve",
        "register",
        "room",
        "stage",
        "commit",
        "pass",
        "rest",
        "wait",
        "ticket",
        "between",
        "pass_joined",
        "pass_checked",
        "pass_barrier",
        "pass_staged",
        "pass_first",
        "pass_first_checked",
        "pass_first_staged",
        "pass_spawned",
        "half_own",
        "half_wait",
        "half_partner",
        "half_alone",
        "half_back",
    ];
    static NS: [AtomicU64; N] = [const { AtomicU64::new(0) }; N];
    static COUNT: [AtomicU64; N] = [const { AtomicU64::new(0) }; N];

    /// A thread's own sums: nanoseconds and laps per phase, laps since the last flush.
    /// Flushed every 256 laps, and when the thread ends.
    struct Local([u64; N], [u64; N], u32);

    impl Drop for Local {
        fn drop(&mut self) {
            flush(&mut self.0, &mut self.1);
        }
    }

    thread_local! {
        /// When this thread's last wait ended (`Phase::Between`).
        static WAITED: Cell<Option<Instant>> = const { Cell::new(None) };
        static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
        static LOCAL: RefCell<Local> = const { RefCell::new(Local([0; N], [0; N], 0)) };
    }

    pub(crate) fn begin() {
        let now = Instant::now();
        if let Some(w) = WAITED.take() {
            add(Phase::Between, now - w);
        }
        LAST.set(Some(now));
    }

    pub(crate) fn lap(p: Phase) {
        let now = Instant::now();
        let Some(last) = LAST.replace(Some(now)) else { return };
        add(p, now - last);
        if matches!(p, Phase::Wait) {
            WAITED.set(Some(now));
        }
    }

    /// A moment to measure from (`since`), on any thread.
    pub(crate) type Stamp = Instant;

    pub(crate) fn stamp() -> Stamp {
        Instant::now()
    }

    /// One lap of `p`: the time from `from` to now (this thread's laps are untouched).
    pub(crate) fn since(p: Phase, from: Stamp) {
        add(p, from.elapsed());
    }

    /// Adds this thread's pending laps to the totals now (a helper's, at the end of
    /// its part of a pass: otherwise they would wait for 256 more laps and land in a
    /// later `take`).
    pub(crate) fn flush_here() {
        LOCAL.with_borrow_mut(|Local(ns, count, laps)| {
            flush(ns, count);
            *laps = 0;
        });
    }

    fn add(p: Phase, d: std::time::Duration) {
        LOCAL.with_borrow_mut(|Local(ns, count, laps)| {
            ns[p as usize] += d.as_nanos() as u64;
            count[p as usize] += 1;
            *laps += 1;
            if *laps >= 256 {
                flush(ns, count);
                *laps = 0;
            }
        });
    }

    fn flush(ns: &mut [u64; N], count: &mut [u64; N]) {
        for i in 0..N {
            NS[i].fetch_add(std::mem::take(&mut ns[i]), Ordering::Relaxed);
            COUNT[i].fetch_add(std::mem::take(&mut count[i]), Ordering::Relaxed);
        }
    }

    /// The totals since the last call (this thread's pending laps added), one line per
    /// phase: laps, mean µs a lap, total ms; and resets them.
    pub fn take() -> String {
        flush_here();
        let mut out = String::new();
        for i in 0..N {
            let (ns, n) = (NS[i].swap(0, Ordering::Relaxed), COUNT[i].swap(0, Ordering::Relaxed));
            if n > 0 {
                out +=
                    &format!("  {:<14} {:>9} laps {:>9.3} us/lap {:>10.3} ms\n", NAMES[i], n, ns as f64 / n as f64 / 1e3, ns as f64 / 1e6);
            }
        }
        out
    }
}

#[cfg(not(feature = "phase-timing"))]
mod imp {
    use super::Phase;

    #[inline(always)]
    pub(crate) fn begin() {}

    #[inline(always)]
    pub(crate) fn lap(_: Phase) {}

    /// Nothing to measure from: the feature is off.
    #[derive(Clone, Copy)]
    pub(crate) struct Stamp;

    #[inline(always)]
    pub(crate) fn stamp() -> Stamp {
        Stamp
    }

    #[inline(always)]
    pub(crate) fn since(_: Phase, _: Stamp) {}

    #[inline(always)]
    pub(crate) fn flush_here() {}
}

#[cfg(feature = "phase-timing")]
pub use imp::take;
pub(crate) use imp::{begin, flush_here, lap, since, stamp};
