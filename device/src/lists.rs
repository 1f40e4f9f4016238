//! Resident task lists read in place (the table is `resident_shared::lists`): a worker
//! whose slot lies in a list run reads the task from the list in device memory, not
//! from the ring, so a list's submission copies no task. Host side: `host/queue/
//! producer.rs` and the backends' `publish_run`.
//!
//! Orderings, for run `r` over `[first, first + len)` in entry `k = r % LIST_RUNS`:
//! 1. The host writes entry `k` (one 16-byte write: a copy on the transfer stream, or
//!    relaxed stores on the CPU backend), then publishes `tail >= first + len` (a later
//!    copy on the same stream; a release store on the CPU); where the relay publishes
//!    runs, the relay writes the entry (weak stores, a warp barrier) before its
//!    `st.release.gpu` of `tail` (`crate::relay`, `take_runs`). The worker's acquire of
//!    `tail` that shows its slot published (`crate::queue`, step 2) therefore shows
//!    entry `k` too; every load here comes after that acquire in program order.
//! 2. The host rewrites entry `k` (for run `r + LIST_RUNS`) only once run `r` has
//!    completed, and that rewrite may race with a worker's scan of the table. A worker
//!    reads an entry's `span` (first and length) with one 8-byte load, so it sees the
//!    old pair or the new one, never a mix (the 8-byte single-copy atomicity that
//!    NCCL's LL protocol rests on too). Neither can claim the worker's slot `seq`
//!    wrongly: the old run has completed, so `seq`, not yet run, is not in it; the new
//!    run starts at or after the `tail` that the host had published before it, which
//!    is past `seq`. So an entry that holds `seq` is the stable entry of `seq`'s run,
//!    and its `addr`, read before, beside or after its `span` (all after the acquire of
//!    `tail`), is that run's: the scan loads both at once.
//! 3. A warp keeps the last run it found (`RunCache`): its slots increase, so the
//!    next one is often in the same run, and a run's entry describes it until the run
//!    completes, after every one of its slots ran. (Sequence numbers wrap at 2^32: a
//!    cached run could be mistaken for a new one only by a warp that claims nothing
//!    while 2^32 tasks pass, the bound that `tail_seen` lives with too.)
//!
//! `tests/loom/lists.rs` models steps 1-3 with the CPU backend's host side.

use resident_shared::lists::{self, LIST_RUNS, ListRun};
use resident_shared::{CompactTask, KernelParams, Task};

use crate::arch;

/// The table of list runs, as one worker sees it.
#[derive(Clone, Copy)]
pub struct ListTable {
    runs: *const ListRun,
}

/// The run a warp found last: its `span` word and its first task's address.
#[derive(Clone, Copy)]
pub struct RunCache {
    span: u64,
    addr: u64,
}

impl RunCache {
    /// No run: its zero `span` holds no sequence number.
    pub const EMPTY: Self = Self { span: 0, addr: 0 };

    /// The task of `seq` in this run: a `Task`, or in a compact run
    /// ([`RunCache::compact`]) a `CompactTask` (32 bytes a task), which must not be
    /// read as a `Task` (the worker widens it: `copy_compact`).
    #[inline(always)]
    fn task(&self, seq: u32) -> *const Task {
        let stride = if self.compact() { size_of::<CompactTask>() } else { size_of::<Task>() };
        let at = (self.addr & lists::ADDR_MASK) as *const u8;
        at.wrapping_add(seq.wrapping_sub(self.span as u32) as usize * stride).cast()
    }

    /// The run holds sequence number `seq`.
    #[inline(always)]
    pub fn holds(&self, seq: u32) -> bool {
        lists::holds(self.span, seq)
    }

    /// The run's tasks lie in host memory ([`lists::IN_HOST`]).
    #[inline(always)]
    pub fn in_host(&self) -> bool {
        self.addr & lists::IN_HOST != 0
    }

    /// The run's tasks are `CompactTask`s ([`lists::COMPACT`]; only in host memory).
    #[inline(always)]
    pub fn compact(&self) -> bool {
        self.addr & lists::COMPACT != 0
    }
}

impl ListTable {
    /// # Safety
    /// `p.lists` must be null or address a table of `LIST_RUNS` entries, live for the
    /// life of the loop.
    pub unsafe fn new(p: &KernelParams) -> Self {
        Self { runs: p.lists as *const ListRun }
    }

    /// Where the task of published slot `seq` lies if a list run holds it: in the run
    /// `cache` holds, or in one found in the table (then cached). `None`: in the ring.
    /// Every lane must call; the answer is warp-uniform.
    ///
    /// # Safety
    /// Only after the acquire of `tail` showed `seq` published (step 1).
    #[inline(always)]
    pub unsafe fn find(&self, seq: u32, cache: &mut RunCache) -> Option<*const Task> {
        if lists::holds(cache.span, seq) {
            return Some(cache.task(seq));
        }
        if self.runs.is_null() {
            return None;
        }
        let found = unsafe { self.scan(seq) };
        if found.span == 0 {
            return None;
        }
        *cache = found;
        Some(cache.task(seq))
    }

    /// The run that holds `seq`, from the table ([`RunCache::EMPTY`] if none). Out of
    /// line: the loop's register budget.
    ///
    /// Every lane loads the `span` and `addr` of each of its entries before it tests
    /// any (`LIST_RUNS / 32` entries a lane on the GPU, all four loads in flight: one
    /// round trip to L2 where a test after each `span` and an `addr` after a match took
    /// three in a row; the CPU's one lane reads them all). An `addr` read beside its
    /// `span`, not after it, is still the run's (step 2): after the acquire of `tail`
    /// that showed `seq` published, the entry of `seq`'s run holds that run's `span` and
    /// `addr` and keeps them until `seq` has run; any other entry's `span`, old or new,
    /// does not hold `seq`, so its `addr` is never used.
    #[inline(never)]
    unsafe fn scan(&self, seq: u32) -> RunCache {
        let mut found = RunCache::EMPTY;
        let lane = arch::lane_id() as usize;
        let load = |i: usize| {
            let run = unsafe { self.runs.add(i) };
            // Relaxed, .gpu, 8 bytes at once: step 2.
            unsafe { (arch::ld_relaxed_gpu_u64(&raw const (*run).span), arch::ld_relaxed_gpu_u64(&raw const (*run).addr)) }
        };
        if arch::WARP as usize * 2 == LIST_RUNS {
            // A lane keeps at most one match: only the live run's entry holds `seq`.
            let ((s0, a0), (s1, a1)) = (load(lane), load(lane + arch::WARP as usize));
            if lists::holds(s0, seq) {
                found = RunCache { span: s0, addr: a0 };
            } else if lists::holds(s1, seq) {
                found = RunCache { span: s1, addr: a1 };
            }
        } else {
            let mut i = lane;
            while i < LIST_RUNS {
                let (span, addr) = load(i);
                if lists::holds(span, seq) {
                    found = RunCache { span, addr };
                }
                i += arch::WARP as usize;
            }
        }
        let votes = arch::ballot(found.span != 0);
        if votes == 0 {
            return RunCache::EMPTY;
        }
        let from = votes.trailing_zeros();
        let word = |v: u64| arch::shfl_idx(v as u32, from) as u64 | (arch::shfl_idx((v >> 32) as u32, from) as u64) << 32;
        RunCache { span: word(found.span), addr: word(found.addr) }
    }
}
