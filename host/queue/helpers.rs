//! Host threads that validate and stage a large batch beside the thread that submits it
//! (`RuntimeConfig::submit_threads`): a rayon pool of the runtime's own, started at the
//! first large batch. The submitting thread works too; the helpers take parts of the
//! batch from a shared counter.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Tasks from which a batch is validated and staged on several threads.
pub(crate) const PARALLEL_MIN: usize = 4096;

/// How long helpers stay awake after a pass where spinning is allowed (`Helpers::new`).
pub(crate) const LINGER: Duration = Duration::from_micros(50);

pub(crate) struct Helpers {
    /// Threads per large batch, the submitting one included (1: none beside it).
    threads: usize,
    pool: OnceLock<Option<rayon::ThreadPool>>,
    /// How long each helper stays awake after a pass (`RuntimeConfig::submit_spin`):
    /// rayon's threads go to sleep between passes, and woke 15-23 µs late on average
    /// into a 20k-task pass on the H100 machine's host.
    linger: Duration,
    /// Passes begun, and passes under way: a lingering helper returns as soon as a
    /// pass begins or while one is under way (another producer's, whose jobs may wait
    /// for this thread), so that its thread takes that pass's work at once.
    passes: Arc<Passes>,
}

#[derive(Default)]
struct Passes {
    begun: AtomicU64,
    running: AtomicU64,
}

impl Passes {
    /// Marks a pass under way until the guard drops (by unwinding too).
    fn begin(&self) -> impl Drop + '_ {
        struct Running<'a>(&'a AtomicU64);
        impl Drop for Running<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::Relaxed);
            }
        }
        self.begun.fetch_add(1, Ordering::Relaxed);
        self.running.fetch_add(1, Ordering::Relaxed);
        Running(&self.running)
    }
}

impl Helpers {
    /// `threads`: `RuntimeConfig::submit_threads` (0: one per core, at most 8);
    /// `linger`: `RuntimeConfig::submit_spin` (`None`: [`LINGER`] where `spin_ok`, the
    /// backend has no worker threads of its own on the host, and the host has at least
    /// twice as many cores as the pass has threads; else none).
    pub fn new(threads: usize, linger: Option<Duration>, spin_ok: bool) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = match threads {
            0 => cores.min(8),
            n => n,
        };
        let linger = linger.unwrap_or(if spin_ok && cores >= threads.saturating_mul(2) { LINGER } else { Duration::ZERO });
        Self { threads, pool: OnceLock::new(), linger, passes: Arc::default() }
    }

    /// How long helpers stay awake after a pass (zero: they do not spin).
    pub fn lingers_for(&self) -> Duration {
        self.linger
    }

    /// Threads a pass runs on, the caller's included.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `work` on up to `parts` threads at once (the caller's among them) and
    /// returns when every one has returned. Without helpers (one thread, or a pool that
    /// could not start), on the caller alone.
    pub fn run(&self, parts: usize, work: &(dyn Fn() + Sync)) {
        let k = self.threads.min(parts);
        let pool = if k > 1 && !inside_rayon() { self.pool() } else { None };
        match pool {
            // The caller runs `work` too, in place; the scope returns once the helpers'
            // copies have returned, so `work`'s borrows outlive them.
            Some(pool) => self.pass(pool, k - 1, || {
                let start = crate::queue::phases::stamp();
                pool.in_place_scope(|s| {
                    for _ in 1..k {
                        s.spawn(|_| work());
                    }
                    crate::queue::phases::since(crate::queue::phases::Phase::PassSpawned, start);
                    work();
                })
            }),
            None => work(),
        }
    }

    /// Runs `body` (a scope of `pool`'s, with `helpers` helpers) as a pass under way
    /// (`Passes`), then keeps those helpers awake ([`Helpers::linger`]).
    fn pass(&self, pool: &rayon::ThreadPool, helpers: usize, body: impl FnOnce()) {
        let pass = self.passes.begin();
        body();
        drop(pass);
        self.linger(pool, helpers);
    }

    /// Keeps `n` helpers awake for `linger`, or until the next pass begins, or while
    /// another is under way (four producers' passes overlap: a helper spinning for one
    /// held up another's jobs, 4 x 4096 streamed 391 against 465 M tasks/s): each
    /// runs a job that spins (reading shared words) and then returns, so its thread
    /// looks for work at once instead of waking from sleep. The jobs wait for nothing
    /// and own what they read, so they never hold a pass up or outlive their purpose
    /// by more than `linger`.
    fn linger(&self, pool: &rayon::ThreadPool, n: usize) {
        if self.linger.is_zero() {
            return;
        }
        let seen = self.passes.begun.load(Ordering::Relaxed);
        // (At most 1 s: `RuntimeConfig::validate`.)
        let Some(until) = Instant::now().checked_add(self.linger) else { return };
        for _ in 0..n {
            let passes = self.passes.clone();
            pool.spawn(move || {
                // Relaxed: hints only; a job that returns early or late changes no
                // outcome, only when a thread wakes.
                while passes.begun.load(Ordering::Relaxed) == seen && passes.running.load(Ordering::Relaxed) == 0 && Instant::now() < until
                {
                    std::hint::spin_loop();
                }
            });
        }
    }

    /// Runs `feed` on the caller, which hands jobs to the helpers through the
    /// [`Jobs`] it gets (on the caller itself, in order, when there are none); returns
    /// once every job has run. Jobs must never wait for anything but a short lock: the
    /// helpers are shared by every batch of the runtime, and a job that waited (for
    /// ring room, say) would hold a helper that another batch's scope waits for, and a
    /// validation that holds the registries' read lock behind it (a buffer drop, then
    /// `close`, blocked without limit).
    pub fn feed<'a>(&self, parts: usize, feed: impl FnOnce(&mut Jobs<'_, 'a>)) {
        let k = self.threads.min(parts);
        let pool = if k > 1 && !inside_rayon() { self.pool() } else { None };
        match pool {
            Some(pool) => self.pass(pool, k - 1, || pool.in_place_scope(|s| feed(&mut Jobs { scope: Some(s) }))),
            None => feed(&mut Jobs { scope: None }),
        }
    }

    fn pool(&self) -> Option<&rayon::ThreadPool> {
        self.pool
            .get_or_init(|| {
                rayon::ThreadPoolBuilder::new().num_threads(self.threads - 1).thread_name(|i| format!("resident-submit-{i}")).build().ok()
            })
            .as_ref()
    }
}

/// Whether this thread is a worker of some rayon pool (the user's, say). Then the
/// helpers are not used: a scope entered from a rayon worker waits by running other
/// jobs of that worker's pool, and one of them could drop a buffer (the registries'
/// write lock) on this thread while it holds their read lock for a batch's check, a
/// deadlock with itself (found in review). The batch is checked and staged on this
/// thread alone instead.
fn inside_rayon() -> bool {
    rayon::current_thread_index().is_some()
}

/// Where [`Helpers::feed`] hands its jobs.
pub(crate) struct Jobs<'s, 'a> {
    scope: Option<&'s rayon::Scope<'a>>,
}

impl<'a> Jobs<'_, 'a> {
    /// Runs `job` on a helper (or here, at once, without helpers).
    pub fn run(&mut self, job: impl FnOnce() + Send + 'a) {
        match self.scope {
            Some(s) => s.spawn(|_| job()),
            None => job(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Passes back to back with lingering helpers (and a long linger, so that every
    /// pass but the first finds them spinning): each runs its work on every thread it
    /// asked for and returns; a spinning helper never holds the next pass up.
    #[test]
    fn lingering_helpers_take_the_next_pass() {
        let h = Helpers::new(4, Some(Duration::from_millis(100)), false);
        let start = Instant::now();
        for _ in 0..50 {
            let ran = AtomicUsize::new(0);
            h.run(4, &|| {
                ran.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(ran.load(Ordering::Relaxed), 4.min(h.threads));
            let fed = AtomicUsize::new(0);
            h.feed(8, |jobs| {
                for _ in 0..8 {
                    let fed = &fed;
                    jobs.run(move || {
                        fed.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
            assert_eq!(fed.load(Ordering::Relaxed), 8);
        }
        // Had a pass waited for a linger to run out, 100 passes would take 10 s.
        assert!(start.elapsed() < Duration::from_secs(4), "{:?}", start.elapsed());
    }

    #[test]
    fn spinning_is_off_where_not_allowed() {
        assert!(Helpers::new(8, None, false).linger.is_zero());
        assert!(Helpers::new(1, Some(Duration::ZERO), true).linger.is_zero());
    }
}

#[cfg(test)]
pub(crate) mod timing {
    use super::*;
    use crate::util::timing::med;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// What a pass on the helpers costs on this host: waking them, and copying a
    /// 20,000-task batch (1.28 MB) in 20 parts. `cargo test --release --lib
    /// helpers::timing -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn helper_pass() {
        let src = vec![7u8; 20_000 * 64];
        let mut dst = vec![0u8; 20_000 * 64];
        for threads in [1, 2, 4, 8] {
            let h = Helpers::new(threads, Some(Duration::ZERO), false);
            let empty = med(|| h.run(threads, &|| {}));
            let out = dst.as_mut_ptr() as usize;
            let copy = med(|| {
                let next = AtomicUsize::new(0);
                h.run(20, &|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= 20 {
                            return;
                        }
                        let part = 64 * 1000;
                        // SAFETY: parts are disjoint and lie in `dst`, which outlives the run.
                        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().add(i * part), (out as *mut u8).add(i * part), part) };
                    }
                });
            });
            println!("helpers {threads}: empty pass {empty:.1} us, 1.28 MB copy in 20 parts {copy:.1} us");
        }
        std::hint::black_box(&dst);
    }
}
