//! Wakes the futures of tickets ([`crate::Ticket::wait_async`]): one background thread
//! per runtime, started on the first registration, that advances the completion tracker
//! while futures wait and wakes each one whose ticket is done. It checks the device's
//! health as waiters do, so a fault resolves (and wakes) every waiting future. It holds
//! the runtime weakly: dropping the runtime ends it.

use std::sync::{Arc, Condvar, Mutex, Weak};
use std::task::Waker;
use std::time::{Duration, Instant};

use super::ticket_state::TicketState;
use crate::runtime::Shared;

/// How long the idle thread waits for a registration before it checks whether the
/// runtime is gone.
const IDLE_WAIT: Duration = Duration::from_millis(100);

#[derive(Default)]
pub(crate) struct Notifier {
    state: Mutex<State>,
    cv: Condvar,
}

#[derive(Default)]
struct State {
    waiting: Vec<(Arc<TicketState>, Waker)>,
    running: bool,
}

impl Notifier {
    /// Wakes `waker` once `ticket` is done (at once if it already is).
    pub fn register(&self, shared: &Arc<Shared>, ticket: &Arc<TicketState>, waker: &Waker) {
        let mut s = self.state.lock().unwrap();
        match s.waiting.iter_mut().find(|(t, _)| Arc::ptr_eq(t, ticket)) {
            Some((_, w)) => w.clone_from(waker),
            None => s.waiting.push((ticket.clone(), waker.clone())),
        }
        if !s.running {
            s.running = true;
            let weak = Arc::downgrade(shared);
            let spawned = std::thread::Builder::new().name("resident-notifier".into()).spawn(move || run(weak));
            if spawned.is_err() {
                // No thread: fall back to waking at once, so the future polls again.
                s.running = false;
                waker.wake_by_ref();
            }
        }
        drop(s);
        self.cv.notify_one();
    }
}

fn run(weak: Weak<Shared>) {
    let mut last_progress = Instant::now();
    loop {
        let Some(shared) = weak.upgrade() else { return };
        let n = &shared.notifier;
        let mut s = n.state.lock().unwrap();
        if s.waiting.is_empty() {
            if shared.is_stopped() {
                s.running = false;
                return;
            }
            let (g, _) = n.cv.wait_timeout(s, IDLE_WAIT).unwrap();
            drop(g);
            last_progress = Instant::now();
            continue;
        }
        drop(s);
        shared.tracker.advance(&shared.backend);
        // A dead device fails every ticket (and so wakes every future).
        let _ = shared.poll_health();
        let mut s = n.state.lock().unwrap();
        let before = s.waiting.len();
        let mut woken = vec![];
        s.waiting.retain(|(t, w)| {
            let done = t.is_done();
            if done {
                woken.push(w.clone());
            }
            !done
        });
        let progress = s.waiting.len() != before;
        drop(s);
        drop(shared);
        woken.into_iter().for_each(Waker::wake);
        if progress {
            last_progress = Instant::now();
        }
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
