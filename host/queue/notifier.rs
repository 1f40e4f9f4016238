//! Wakes the futures of tickets ([`crate::Ticket::wait_async`]): one background thread
//! per runtime, started on the first registration, that advances the completion tracker
//! while futures wait and wakes each one whose ticket is done. It checks the device's
//! health as waiters do, so a fault resolves (and wakes) every waiting future.
//!
//! With a task deadline (`RuntimeConfig::task_deadline`) the thread starts with the
//! runtime and, while no future waits, polls the runtime's health every quarter of the
//! deadline: the watchdog fires even if nobody ever waits (`host/runtime/watchdog.rs`).
//!
//! The thread holds the runtime only weakly, and strongly only for the moment of one
//! poll: never while it sleeps. Shutdown stops and joins it, so it never ends up the
//! last owner of the runtime's memory (freeing pinned memory on a thread of its own
//! while another runtime's kernel is resident would wait forever: docs/protocol.md).

use std::sync::{Arc, Condvar, Mutex, Weak};
use std::task::Waker;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::ticket_state::TicketState;

/// What the notifier thread drives while futures wait: the runtime, as far as the
/// notifier needs to know it (it holds it only weakly, and strongly only for the
/// moment of one poll).
pub(crate) trait Progress: Send + Sync {
    /// Reads every newly completed segment (the completion tracker's scan).
    fn advance(&self);
    /// Asks whether the workers are alive (and fires the watchdog); a fault or a hung
    /// task resolves every ticket, and so wakes every future.
    fn poll_health(&self) -> crate::Result<()>;
    /// The idle turn (every watch period while no future waits): elastic residency
    /// exits the kernel here once the runtime has been idle long enough. A period
    /// shorter than the watch period for the next turn only, if it needs one.
    fn idle(&self) -> Option<Duration>;
}

/// How long the idle thread sleeps before it looks again for a stop request.
const IDLE_WAIT: Duration = Duration::from_millis(100);

#[derive(Default)]
pub(crate) struct Notifier {
    inner: Arc<Inner>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Default)]
struct Inner {
    state: Mutex<State>,
    cv: Condvar,
}

#[derive(Default)]
struct State {
    /// The registered futures: (future id, its ticket, its latest waker). One entry per
    /// future, so every future of a ticket is woken.
    waiting: Vec<(u64, Arc<TicketState>, Waker)>,
    stop: bool,
    /// While idle, poll the runtime's health this often (the watchdog's clock).
    watch: Option<Duration>,
    /// The thread died (a panic) and woke every future it had: the next registration
    /// must start another, even if the dying thread has not finished yet (it may still
    /// be waking them).
    dead: bool,
}

impl Notifier {
    /// A new future id (never 0, never reused).
    pub fn next_id() -> u64 {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Forgets future `id` (dropped before its ticket was done): nothing of it stays.
    pub fn deregister(&self, id: u64) {
        let mut s = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = s.waiting.iter().position(|(f, _, _)| *f == id) {
            s.waiting.swap_remove(i);
        }
    }

    /// Wakes future `id`'s `waker` (the latest it was polled with) once `ticket` is done.
    pub fn register(&self, shared: Weak<dyn Progress>, id: u64, ticket: &Arc<TicketState>, waker: &Waker) {
        let mut s = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.stop {
            // Shut down: every ticket is resolved; let the future poll again.
            waker.wake_by_ref();
            return;
        }
        match s.waiting.iter_mut().find(|(f, _, _)| *f == id) {
            Some((_, _, w)) => {
                if !w.will_wake(waker) {
                    w.clone_from(waker)
                }
            }
            None => s.waiting.push((id, ticket.clone(), waker.clone())),
        }
        drop(s);
        if !self.ensure_thread(shared) {
            // No thread: wake at once, so the future polls again (busy, not stuck).
            waker.wake_by_ref();
        }
        self.inner.cv.notify_one();
    }

    /// Starts the thread now, polling health every `period` while idle: the watchdog.
    pub fn watch(&self, shared: Weak<dyn Progress>, period: Duration) -> crate::Result<()> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner()).watch = Some(period);
        if self.ensure_thread(shared) { Ok(()) } else { Err(crate::Error::Config("cannot start the watchdog thread".into())) }
    }

    /// Whether the thread runs (started now if it did not).
    fn ensure_thread(&self, shared: Weak<dyn Progress>) -> bool {
        let mut thread = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        // A thread that died (a panic: `guarded` marked it dead, under the state lock,
        // as it took every future it had, and their next poll lands here), or ended:
        // start another. Not only once it has finished: a future that registered after
        // the dying thread took the others would otherwise wait for nobody (a lost
        // wake-up Miri's scheduling found).
        let dead = std::mem::take(&mut self.inner.state.lock().unwrap_or_else(|e| e.into_inner()).dead);
        if dead || thread.as_ref().is_some_and(|h| h.is_finished()) {
            let _ = thread.take().map(JoinHandle::join);
        }
        if thread.is_none() {
            let (inner, weak) = (self.inner.clone(), shared);
            match std::thread::Builder::new().name("resident-notifier".into()).spawn(move || guarded(&inner, &weak)) {
                Ok(h) => *thread = Some(h),
                Err(_) => return false,
            }
        }
        true
    }

    /// Stops the thread and waits for it; wakes every future still registered (their
    /// tickets are resolved by then). Called by shutdown.
    pub fn stop(&self) {
        let woken: Vec<Waker> = {
            let mut s = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
            s.stop = true;
            s.waiting.drain(..).map(|(_, _, w)| w).collect()
        };
        self.inner.cv.notify_all();
        woken.into_iter().for_each(Waker::wake);
        if let Some(h) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take()
            && h.thread().id() != std::thread::current().id()
        {
            let _ = h.join();
        }
    }
}

/// Test hook: the notifier thread panics at its next turn.
#[cfg(test)]
pub(crate) static PANIC_NEXT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The thread's body: [`run`], and if it panics, every registered future is woken (not
/// resolved): each polls again, finds its ticket not done, registers again, and that
/// registration starts a new thread (`ensure_thread`). No wake-up is lost.
fn guarded(inner: &Inner, weak: &Weak<dyn Progress>) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(inner, weak))).is_err() {
        let woken: Vec<Waker> = {
            let mut s = inner.state.lock().unwrap_or_else(|e| e.into_inner());
            s.dead = true;
            s.waiting.drain(..).map(|(_, _, w)| w).collect()
        };
        woken.into_iter().for_each(Waker::wake);
    }
}

fn run(inner: &Inner, weak: &Weak<dyn Progress>) {
    let mut last_progress = Instant::now();
    // The idle turn's wish for the next wait (`Progress::idle`).
    let mut sooner: Option<Duration> = None;
    loop {
        #[cfg(test)]
        if PANIC_NEXT.swap(false, std::sync::atomic::Ordering::SeqCst) {
            panic!("resident-notifier: injected panic (test)");
        }
        {
            let s = inner.state.lock().unwrap_or_else(|e| e.into_inner());
            if s.stop {
                return;
            }
            if s.waiting.is_empty() {
                let watch = s.watch;
                let wait = watch.map_or(IDLE_WAIT, |w| sooner.map_or(w, |n| n.min(w)));
                let (s, _) = inner.cv.wait_timeout(s, wait).unwrap();
                let stop = s.stop;
                drop(s);
                if watch.is_some() && !stop {
                    let Some(shared) = weak.upgrade() else { return };
                    // A hung task fires the watchdog here if nobody waits.
                    let _ = shared.poll_health();
                    sooner = shared.idle();
                }
                last_progress = Instant::now();
                continue;
            }
        }
        {
            let Some(shared) = weak.upgrade() else { return };
            shared.advance();
            // A dead device fails every ticket (and so wakes every future).
            let _ = shared.poll_health();
        }
        let woken: Vec<Waker> = {
            let mut s = inner.state.lock().unwrap_or_else(|e| e.into_inner());
            let mut woken = vec![];
            s.waiting.retain(|(_, t, w)| {
                let done = t.is_done();
                if done {
                    woken.push(w.clone());
                }
                !done
            });
            woken
        };
        if !woken.is_empty() {
            last_progress = Instant::now();
        }
        woken.into_iter().for_each(Waker::wake);
        // Spin briefly (completions land within microseconds), then yield, then sleep.
        let idle = last_progress.elapsed();
        if idle < Duration::from_micros(50) {
            std::hint::spin_loop();
        } else if idle < Duration::from_millis(2) {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Runtime, RuntimeConfig, Task};
    use std::time::{Duration, Instant};

    /// A notifier thread that dies (a panic) while a future waits is replaced, and the
    /// future still resolves: no lost wake-up. The task waits on a counter that is
    /// signalled only once the first notifier thread has died, so the order does not
    /// depend on timing (it ran under Miri too, whose clock is not the wall's).
    #[test]
    fn a_dead_notifier_is_restarted() {
        // SeqCst: under Miri a relaxed flag may read stale for long (weak memory).
        use std::sync::atomic::Ordering::SeqCst;
        let rt = Runtime::with_config(RuntimeConfig { async_spin: Duration::ZERO, cpu_workers: 2, ..RuntimeConfig::cpu() }).unwrap();
        let c = rt.counter().unwrap();
        let t = rt.submit(&[Task::noop(1).after(c.id(), 1)]).unwrap();
        super::PANIC_NEXT.store(true, SeqCst);
        let start = Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                // The first notifier thread takes the injected panic at its first turn.
                while super::PANIC_NEXT.load(SeqCst) {
                    std::thread::yield_now();
                }
                rt.submit(&[Task::noop(0).signals(c.id())]).unwrap().wait().unwrap();
            });
            assert_eq!(futures::executor::block_on(t.wait_async()), Ok(()));
        });
        // Generous: Miri's clock runs far from the wall's.
        assert!(start.elapsed() < Duration::from_secs(600));
    }
}
