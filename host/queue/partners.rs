//! Partners: threads that each take half of a mid-size batch (its check, then its
//! staging) beside the thread that submits it.
//!
//! The helpers' rayon pass splits large batches well, but each pass costs about 7 µs of
//! job injection and wake-ups on the submitting thread, more than half of a 1024-task
//! batch's own work there. A partner is a thread with one word of its own ([`Slot`]),
//! on which it spins for a while after its last job and then parks. A caller hands it a
//! job with one compare-and-swap on that word, does its own half meanwhile, and then
//! either takes the job back (the partner had not started it: a parked or descheduled
//! partner costs the caller nothing but its own work) or waits for the partner to
//! finish it. A caller never waits for a partner to wake.
//!
//! The word, and who moves it. Every move out of a state another thread may move it
//! from is a CAS or a swap, so exactly one thread owns each step; the two plain stores
//! are the caller's `DONE -> IDLE` (only the caller moves `DONE`) and `new`'s STOP for
//! a partner that could not start:
//!
//! ```text
//! IDLE    --caller CAS, Release-->   job    --partner CAS, Acquire--> RUNNING
//! RUNNING --partner swap, Release--> DONE   --caller store, Release--> IDLE
//! job     --caller CAS (take back)--> IDLE
//! IDLE    --partner CAS-->          PARKED  --caller CAS, Release--> job (then unpark)
//! any     --drop swap-->            STOP
//! ```
//!
//! Ordering: the caller's Release CAS that posts a job pairs with the partner's Acquire
//! CAS that takes it, so what the job captures (written before the post) is visible to
//! the partner. The partner's Release swap to `DONE` pairs with the caller's Acquire
//! load that sees it, so the job's writes (its output, the slots it staged) are visible
//! to the caller, and through the caller to whatever it publishes next. A swap, not a
//! store: a locked instruction on x86, which also drains the partner's write-combining
//! buffers (ordinary stores into write-combined staging, `staging_write_combined`,
//! which a plain store would not order; streaming stores are fenced by the staging
//! itself). Between `job` and `IDLE`/`DONE` the job belongs to one thread: the partner
//! that took it, or the caller that took it back. The caller owns the slot from its
//! post until it stores `IDLE`, so no other caller's job can be mistaken for its own.

use crossbeam::utils::CachePadded;
use std::cell::UnsafeCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
// The split's share and the stream's clock: hints, std's atomics also under loom (they
// change how work is split or whether a partner is woken, never an outcome).
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::time::{Duration, Instant};

use super::helpers::LINGER;
use super::phases::{self, Phase};
use crate::util::sync::atomic::{AtomicUsize, Ordering};
use crate::util::sync::{back_off, thread};

const IDLE: usize = 0;
const PARKED: usize = 1;
const STOP: usize = 2;
const RUNNING: usize = 3;
const DONE: usize = 4;
// Any other value: a posted job, the address of its `Header` (aligned to 8, so never
// one of the above).

/// A partner's word.
struct Slot {
    word: CachePadded<AtomicUsize>,
}

/// What a posted job's address points at: the first field of a `Job`.
#[repr(C)]
struct Header {
    /// Runs the job whose header this is (`run::<A, R>`).
    run: unsafe fn(*const Header),
}

#[repr(C)]
struct Job<A, R> {
    header: Header,
    work: UnsafeCell<Option<A>>,
    out: UnsafeCell<Option<std::thread::Result<R>>>,
}

/// Runs the job at `h` once, keeping its result or its panic.
///
/// # Safety
/// `h` is the header of a live `Job<A, R>` owned by the calling thread for the call:
/// the partner that took it by its CAS, or the caller that took it back.
unsafe fn run<A: FnOnce() -> R, R>(h: *const Header) {
    // SAFETY: the header is the job's first field (`repr(C)`); the caller's contract
    // makes this thread the job's only user.
    let job = unsafe { &*(h as *const Job<A, R>) };
    // SAFETY: the cells are this thread's alone for the call (the contract); the
    // caller reads `out` only after the partner's DONE (Acquire) or after running the
    // job itself.
    let work = unsafe { (*job.work.get()).take() }.expect("a job runs once");
    let out = catch_unwind(AssertUnwindSafe(work));
    // SAFETY: as above.
    unsafe { *job.out.get() = Some(out) };
}

/// The runtime's partners.
pub(crate) struct Partners {
    /// Shared with the partners' threads (one slot each).
    slots: Arc<[Slot]>,
    threads: Vec<thread::JoinHandle<()>>,
    /// The partner's share of a split ([`Partners::split`]), in 256ths: moved by one
    /// after each join toward the point where neither side waits for the other (a
    /// partner took 3.6 µs for a half that its caller did in 2.9 on the H100 machine's
    /// host, and starts a hand-off later).
    share: CachePadded<AtomicU32>,
    /// When a join last found no partner awake (ns from `epoch`, 0: never): a parked
    /// partner is woken only for a join that follows such a one within [`STREAM_GAP`].
    last_asleep: CachePadded<AtomicU64>,
    epoch: Instant,
}

/// A parked partner is woken (a futex call on the caller) only for a join that comes
/// within this long of the last join that found every partner asleep: a thread that
/// submits a mid-size batch now and then pays no wake-up and keeps no partner spinning
/// for nothing; a stream's second batch wakes one, which then spins between batches.
const STREAM_GAP: Duration = Duration::from_millis(1);

/// How a posted job ended, as its caller saw it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ended {
    /// Taken back unrun (to run on the caller).
    Back,
    /// Done before the caller finished its own part.
    Ahead,
    /// The caller waited for it.
    Behind,
}

/// The partner's share of a split, in 256ths: at first, and its bounds.
const SHARE_START: u32 = 128;
const SHARE_MIN: u32 = 64;
const SHARE_MAX: u32 = 192;

impl Partners {
    /// `count` partners, each spinning `linger` after its last job before it parks
    /// (under loom: two looks at its word).
    pub fn new(count: usize, linger: Duration) -> Self {
        let slots: Arc<[Slot]> = (0..count).map(|_| Slot { word: CachePadded::new(AtomicUsize::new(IDLE)) }).collect();
        let mut threads = Vec::with_capacity(count);
        for k in 0..slots.len() {
            let mine = slots.clone();
            match thread::Builder::new().name("resident-partner".into()).spawn(move || partner(&mine[k], linger)) {
                Ok(h) => threads.push(h),
                // No thread: its slot says STOP, and no caller posts there. (The
                // threads after it are `threads`' next, so its index is not theirs:
                // stop here.)
                Err(_) => {
                    slots[k..].iter().for_each(|s| s.word.store(STOP, Ordering::Relaxed));
                    break;
                }
            }
        }
        Self {
            slots,
            threads,
            share: CachePadded::new(AtomicU32::new(SHARE_START)),
            last_asleep: CachePadded::new(AtomicU64::new(0)),
            epoch: Instant::now(),
        }
    }

    /// This join found no partner awake: whether the last such join came within
    /// [`STREAM_GAP`] (under loom always, so that models post to parked partners).
    /// Relaxed: a hint (std's atomic), deciding only whether a partner is woken.
    fn streaming(&self) -> bool {
        if cfg!(loom) {
            return true;
        }
        // (Plus one, so that a join in the epoch's first nanosecond is not "long ago".)
        let now = self.epoch.elapsed().as_nanos() as u64 + 1;
        let last = self.last_asleep.swap(now, Ordering::Relaxed);
        last != 0 && now - last.min(now) < STREAM_GAP.as_nanos() as u64
    }

    /// Of `n` items to split between a caller and a partner, how many the caller takes
    /// (the first ones; at least one each where `n >= 2`): about half, adjusted by how
    /// the last joins ended.
    pub fn split(&self, n: usize) -> usize {
        let share = self.share.load(Ordering::Relaxed) as usize;
        (n - n * share / 256).clamp(n.min(1), n.saturating_sub(1).max(1))
    }

    /// No partners: every `join` runs both halves on the caller.
    pub fn none() -> Self {
        Self::new(0, Duration::ZERO)
    }

    /// As `RuntimeConfig::submit_partners` says: `Some(n)`, `n` partners lingering
    /// `submit_spin` (default [`LINGER`]); `None`, a quarter of the cores (at most 4)
    /// where the helpers linger (`helpers_linger` not zero: CUDA, cores to spare), with
    /// the same linger, else none.
    pub fn configured(count: Option<usize>, submit_spin: Option<Duration>, helpers_linger: Duration) -> Self {
        match count {
            Some(0) => Self::none(),
            Some(n) => Self::new(n, submit_spin.unwrap_or(LINGER)),
            None if helpers_linger.is_zero() => Self::none(),
            None => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                match (cores / 4).min(4) {
                    0 => Self::none(),
                    n => Self::new(n, helpers_linger),
                }
            }
        }
    }

    /// How many partners there are (that started).
    pub fn count(&self) -> usize {
        self.threads.len()
    }

    /// Runs `a` on a partner and `b` on this thread side by side, or both here (`b`
    /// first) when no partner is free; returns both results once both have run. A
    /// panic of either is resumed here, after both have finished (or `a` was taken
    /// back unrun, when `b` panicked).
    pub fn join<A, RA, B, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        RA: Send,
        B: FnOnce() -> RB,
    {
        self.join_with(a, b, false)
    }

    /// [`join`](Self::join), and the next [`split`](Self::split)s move toward the
    /// point where neither side of this one would have waited. For joins whose two
    /// sides are the two parts of a split, of like work: a batch's staging (its check
    /// may end early at a refused task, which says nothing of the pace).
    pub fn join_paced<A, RA, B, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        RA: Send,
        B: FnOnce() -> RB,
    {
        self.join_with(a, b, true)
    }

    fn join_with<A, RA, B, RB>(&self, a: A, b: B, paced: bool) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        RA: Send,
        B: FnOnce() -> RB,
    {
        let job = Job::<A, RA> { header: Header { run: run::<A, RA> }, work: UnsafeCell::new(Some(a)), out: UnsafeCell::new(None) };
        // (From the whole job, not its header field: `run` reads all of it.)
        let h = &job as *const Job<A, RA> as *const Header;
        /// When `b` unwinds, after the job has ended (this guard drops after `Finish`):
        /// a panic payload of the job's is leaked, not dropped, since its drop may be
        /// user code that panics again (as `producer::Bad::leak`).
        struct Leak<'j, R>(&'j UnsafeCell<Option<std::thread::Result<R>>>);
        impl<R> Drop for Leak<'_, R> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    // SAFETY: the job has ended or was taken back (`Finish` dropped
                    // first): no other thread reads or writes its cells.
                    if let Some(Err(payload)) = unsafe { (*self.0.get()).take() } {
                        std::mem::forget(payload);
                    }
                }
            }
        }
        let leak = Leak(&job.out);
        let posted = self.post(h as usize);
        /// Takes the job back or waits for it, also when `b` unwinds: the job borrows
        /// this frame.
        struct Finish<'s>(Option<(&'s Slot, usize)>);
        impl Finish<'_> {
            /// How the job ended (`None`: it was never posted).
            fn finish(&mut self) -> Option<Ended> {
                self.0.take().map(|(slot, job)| slot.finish(job))
            }
        }
        impl Drop for Finish<'_> {
            fn drop(&mut self) {
                self.finish();
            }
        }
        let mut wait = Finish(posted.map(|s| (s, h as usize)));
        let own = phases::stamp();
        let rb = b();
        phases::since(Phase::HalfOwn, own);
        let waited = phases::stamp();
        let ended = wait.finish();
        if matches!(ended, None | Some(Ended::Back)) {
            phases::since(if ended.is_some() { Phase::HalfBack } else { Phase::HalfAlone }, phases::stamp());
            // SAFETY: not posted, or taken back: this thread owns the job.
            unsafe { run::<A, RA>(h) };
        }
        if paced {
            // (Relaxed load and store of a hint; a lost update only slows the drift.)
            let share = self.share.load(Ordering::Relaxed);
            match ended {
                Some(Ended::Ahead) if share < SHARE_MAX => self.share.store(share + 1, Ordering::Relaxed),
                Some(Ended::Behind) if share > SHARE_MIN => self.share.store(share - 1, Ordering::Relaxed),
                _ => {}
            }
        }
        drop(wait);
        drop(leak);
        phases::since(Phase::HalfWait, waited);
        match job.out.into_inner().expect("the job ran") {
            Ok(ra) => (ra, rb),
            Err(payload) => std::panic::resume_unwind(payload),
        }
    }

    /// Posts the job at `job` to a partner: an idle one (spinning), else a parked one
    /// (then woken) if joins come in a stream; `None` if every partner is busy.
    fn post(&self, job: usize) -> Option<&Slot> {
        let n = self.slots.len();
        if n == 0 {
            return None;
        }
        // A thread keeps to one partner while it is free: the check of a batch's second
        // half leaves those tasks in the partner's caches, where its staging reads them.
        let start = hint::get() % n;
        for want in [IDLE, PARKED] {
            if want == PARKED && !self.streaming() {
                return None;
            }
            for i in 0..n {
                let k = (start + i) % n;
                let slot = &self.slots[k];
                if slot.word.load(Ordering::Relaxed) == want
                    && slot.word.compare_exchange(want, job, Ordering::Release, Ordering::Relaxed).is_ok()
                {
                    if want == PARKED {
                        self.threads[k].thread().unpark();
                    }
                    hint::set(k);
                    return Some(slot);
                }
            }
        }
        None
    }
}

impl Slot {
    /// After the caller's own half: takes its job back if the partner has not taken it
    /// (`Back`: to run here), else waits for it to finish and frees the slot.
    fn finish(&self, job: usize) -> Ended {
        if self.word.compare_exchange(job, IDLE, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
            return Ended::Back;
        }
        let mut turns = 0;
        // Acquire: pairs with the partner's Release swap to DONE (the job's writes).
        while self.word.load(Ordering::Acquire) != DONE {
            back_off(&mut turns);
        }
        self.word.store(IDLE, Ordering::Release);
        if turns == 0 { Ended::Ahead } else { Ended::Behind }
    }
}

impl Drop for Partners {
    fn drop(&mut self) {
        // No job is posted: a caller holds `&self` from its post to its `finish`.
        for (slot, t) in self.slots.iter().zip(&self.threads) {
            slot.word.swap(STOP, Ordering::AcqRel);
            t.thread().unpark();
        }
        let me = thread::current().id();
        for t in self.threads.drain(..) {
            // (A partner never drops the runtime, but should one: not itself.)
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

/// A partner's life: takes jobs posted into its word, spins `linger` after the last,
/// then parks until a caller posts one, until the word says STOP.
fn partner(slot: &Slot, linger: Duration) {
    let mut idle = Linger::new(linger);
    let mut turns = 0u32;
    loop {
        match slot.word.load(Ordering::Relaxed) {
            STOP => return,
            IDLE if idle.over(turns) => {
                if slot.word.compare_exchange(IDLE, PARKED, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
                    // Until a caller posts (or STOP): unpark follows its CAS, and an
                    // unpark before the park makes the park return at once.
                    while slot.word.load(Ordering::Relaxed) == PARKED {
                        thread::park();
                    }
                    idle = Linger::new(linger);
                }
            }
            // Waiting for a job, or for the caller to free the slot after DONE.
            IDLE | DONE => back_off_spin(&mut turns),
            RUNNING | PARKED => unreachable!("only the partner moves its word to RUNNING or PARKED"),
            job => {
                // Acquire: pairs with the caller's Release post (the job's captures).
                if slot.word.compare_exchange(job, RUNNING, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                    let t = phases::stamp();
                    // DONE however the run ends: should it unwind (`run` catches the
                    // job's panics; this would be the runtime's own bug), the caller
                    // then finds no result and panics, instead of waiting forever.
                    let done = Done(slot);
                    let h = job as *const Header;
                    // SAFETY: the CAS made this thread the job's owner (`run`'s
                    // contract), and its caller waits for DONE before its frame (the
                    // job) goes; `run` is the job's own `run::<A, R>`.
                    unsafe { ((*h).run)(h) };
                    drop(done);
                    phases::since(Phase::HalfPartner, t);
                    idle = Linger::new(linger);
                    turns = 0;
                }
            }
        }
    }
}

/// Says DONE when dropped: the end of a partner's run of a job.
struct Done<'a>(&'a Slot);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        // Release (a locked swap: the module's doc): the job's writes before the
        // caller's Acquire load of DONE.
        self.0.word.swap(DONE, Ordering::Release);
    }
}

/// A spin of an idle partner: a pause (a yield under loom, so the model runs on).
fn back_off_spin(turns: &mut u32) {
    *turns = turns.wrapping_add(1);
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// How long an idle partner spins before it parks.
#[cfg(not(loom))]
struct Linger(Instant);
#[cfg(not(loom))]
impl Linger {
    fn new(linger: Duration) -> Self {
        Self(Instant::now() + linger)
    }
    /// Whether the linger is over, at the `turns`-th spin (the clock is read every
    /// 64th only).
    fn over(&self, turns: u32) -> bool {
        turns.is_multiple_of(64) && Instant::now() >= self.0
    }
}
/// Under loom: two looks at the word, then park (time does not pass in a model).
#[cfg(loom)]
struct Linger(std::cell::Cell<u32>);
#[cfg(loom)]
impl Linger {
    fn new(_: Duration) -> Self {
        Self(std::cell::Cell::new(0))
    }
    fn over(&self, _: u32) -> bool {
        self.0.set(self.0.get() + 1);
        self.0.get() > 2
    }
}

/// The partner this thread used last (a hint; under loom none, so that every run of a
/// model starts alike).
mod hint {
    #[cfg(not(loom))]
    thread_local!(static LAST: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });
    #[cfg(not(loom))]
    pub fn get() -> usize {
        LAST.with(|c| c.get())
    }
    #[cfg(not(loom))]
    pub fn set(k: usize) {
        LAST.with(|c| c.set(k));
    }
    #[cfg(loom)]
    pub fn get() -> usize {
        0
    }
    #[cfg(loom)]
    pub fn set(_: usize) {}
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Rounds of the tests below: fewer under Miri (CI runs these there, for the jobs'
    /// raw pointers and the handshake's races), which interprets every spin.
    const ROUNDS: u64 = if cfg!(miri) { 4 } else { 200 };

    /// Halves run once each, side by side when a partner is free; results and borrows
    /// come back whole.
    #[test]
    fn joins_run_both_halves_once() {
        for count in [0, 1, 3] {
            let p = Partners::new(count, Duration::from_millis(5));
            let data: Vec<u64> = (0..100).collect();
            for _ in 0..ROUNDS {
                let (lo, hi) = data.split_at(50);
                let (a, b) = p.join(|| hi.iter().sum::<u64>(), || lo.iter().sum::<u64>());
                assert_eq!(a + b, data.iter().sum::<u64>());
            }
        }
    }

    /// A split leaves each side at least one item (of two or more), and moves within
    /// its bounds.
    #[test]
    fn splits_stay_within_bounds() {
        let p = Partners::none();
        assert_eq!(p.split(1024), 512);
        for share in [SHARE_MIN, SHARE_MAX] {
            p.share.store(share, Ordering::Relaxed);
            for n in [0usize, 1, 2, 3, 512, 4095] {
                let h = p.split(n);
                assert!(h <= n && (n < 2 || (1..n).contains(&h)), "n {n} share {share}: {h}");
            }
        }
        assert_eq!(p.split(1024), 1024 - 1024 * SHARE_MAX as usize / 256);
    }

    /// Many callers share two partners: every half runs exactly once; a caller that
    /// finds none free runs both.
    #[test]
    fn callers_beside_each_other() {
        let p = Partners::new(2, Duration::from_millis(1));
        let ran = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for i in 0..ROUNDS * 10 {
                        let mut mine = 0;
                        let (x, ()) = p.join(
                            || {
                                ran.fetch_add(1, Ordering::Relaxed);
                                i * 2
                            },
                            || mine = i,
                        );
                        assert_eq!((x, mine), (i * 2, i));
                    }
                });
            }
        });
        assert_eq!(ran.load(Ordering::Relaxed), ROUNDS * 40);
    }

    /// Parked partners are woken by the next post, or their job is taken back: joins
    /// after each partner had time to park still complete, each half once.
    #[test]
    fn parked_partners_wake_or_are_bypassed() {
        let p = Partners::new(1, Duration::ZERO);
        for i in 0..ROUNDS / 4 {
            std::thread::sleep(Duration::from_micros(200));
            let (a, b) = p.join(|| i + 1, || i + 2);
            assert_eq!((a, b), (i + 1, i + 2));
        }
    }

    /// A panic on the partner's half comes back to the caller, after its own half ran;
    /// one in the caller's half waits for the partner's first. The partner lives on.
    #[test]
    fn panics_come_back_to_the_caller() {
        let p = Partners::new(1, Duration::from_millis(50));
        let mine = AtomicU64::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| p.join(|| panic!("partner"), || mine.fetch_add(1, Ordering::Relaxed))));
        assert!(r.is_err());
        assert_eq!(mine.load(Ordering::Relaxed), 1);
        let theirs = AtomicU64::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            p.join(
                || {
                    std::thread::sleep(Duration::from_millis(2));
                    theirs.fetch_add(1, Ordering::Relaxed)
                },
                || panic!("caller"),
            )
        }));
        assert!(r.is_err());
        // Run by the partner, or taken back unrun: never half.
        assert!(theirs.load(Ordering::Relaxed) <= 1);
        assert_eq!(p.join(|| 7, || 8), (7, 8));
    }
}

/// loom: a caller posts a job that reads a cell the caller wrote before the post, and
/// writes it for the caller to read after the join; the partner takes it, or the caller
/// takes it back. loom flags the cell's access if no happens-before edge orders the
/// job's write before the caller's read (the model fails with the partner's Acquire
/// or its Release taken out). Then a post to a parked partner whose job the caller does
/// not take back (a lost wake-up leaves the caller spinning, which loom reports: the
/// model fails with the unpark taken out), and two callers sharing one partner (each
/// job runs once, whoever runs it).
#[cfg(all(test, loom))]
mod loom_partners {
    use super::*;
    use loom::cell::UnsafeCell;

    struct Cell(UnsafeCell<u64>);
    // SAFETY: the model's accesses are what loom checks.
    unsafe impl Sync for Cell {}
    impl Cell {
        fn set(&self, v: u64) {
            self.0.with_mut(|c| unsafe { *c = v });
        }
        fn get(&self) -> u64 {
            self.0.with(|c| unsafe { *c })
        }
    }

    fn posted(w: usize) -> bool {
        !matches!(w, IDLE | PARKED | STOP | RUNNING | DONE)
    }

    #[test]
    fn loom_partner_join_hands_the_job_over() {
        loom::model(|| {
            let p = Partners::new(1, Duration::ZERO);
            let cell = Cell(UnsafeCell::new(0));
            // Written before the post, read by the job; written by the job, read after.
            cell.set(41);
            let (got, mine) = p.join(
                || {
                    cell.set(cell.get() + 1);
                    1u8
                },
                || 2u8,
            );
            assert_eq!((got, mine), (1, 2));
            assert_eq!(cell.get(), 42);
            drop(p);
        });
    }

    #[test]
    fn loom_partner_parked_is_woken_by_a_post() {
        loom::model(|| {
            let p = Partners::new(1, Duration::ZERO);
            // The partner parks after two looks at its word (`Linger` under loom).
            while p.slots[0].word.load(Ordering::Relaxed) != PARKED {
                loom::thread::yield_now();
            }
            let cell = Cell(UnsafeCell::new(0));
            let (got, ()) = p.join(
                || {
                    cell.set(7);
                    1u8
                },
                // Not taken back: the caller's part lasts until the partner took the job.
                || {
                    while posted(p.slots[0].word.load(Ordering::Relaxed)) {
                        loom::thread::yield_now();
                    }
                },
            );
            assert_eq!(got, 1);
            assert_eq!(cell.get(), 7);
            drop(p);
        });
    }

    #[test]
    fn loom_partner_shared_by_two_callers() {
        // Four preemptions at most: unbounded, the model ran 340 s (this: 3 s).
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(4);
        model.check(|| {
            let p = loom::sync::Arc::new(Partners::new(1, Duration::from_secs(1)));
            let other = {
                let p = p.clone();
                loom::thread::spawn(move || p.join(|| 1u8, || 2u8))
            };
            assert_eq!(p.join(|| 3u8, || 4u8), (3, 4));
            assert_eq!(other.join().unwrap(), (1, 2));
            drop(p);
        });
    }
}
