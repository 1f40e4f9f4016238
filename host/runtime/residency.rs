//! Elastic residency: a runtime with nothing to do gives the GPU back. The resident
//! kernel exits once the runtime has been idle for a while ([`Residency::IdleExit`]) or
//! as soon as its queue drains ([`Residency::WhenDrained`]); the next submission
//! launches it again. Queue, lists, counters, buffers and the completion records stay
//! where they are (device or pinned memory); only the kernels leave, so nothing pending
//! is lost and nothing runs twice.
//!
//! The exit, under the producer lock (no reservation is made meanwhile):
//! 1. Idle means every task reserved so far has completed: `completed == next`
//!    (completion implies publication, a reservation still open holds sequence numbers
//!    not yet completed, a task waiting on a counter has not completed, children
//!    complete before their parent's segment).
//! 2. The backend marks itself parking (its health polls then take the kernels' end
//!    for an exit, not a fault), tells the workers to leave (`abort`: nothing is
//!    pending, so nothing is cut short) and waits for both kernels to end.
//! 3. With no kernel running it resets what the next launch starts from: the header
//!    (`head = tail = next`: claims the workers made past `tail` were never run;
//!    `abort`, `exited` and `stop` zero) and the relay's mailbox (`abort` zero,
//!    `relayed`, `resume_next` and `resume_runs` where the relay left off). The host
//!    writes them with synchronous copies; the launch orders them before the kernels'
//!    reads.
//!
//! The relaunch: the first reservation that finds the backend parked launches both
//! kernels again, under the producer lock, before it takes its sequence numbers; so
//! every publication follows a launch.
//!
//! Who exits: the notifier thread, which a runtime with an exit policy starts at once
//! and which looks every quarter of the idle time (at least every 50 µs, at most every
//! 10 ms); or the user, through [`crate::Sharing::release`].

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::runtime::Shared;
use crate::runtime::policy::{Residency, ResidencyStats};
use crate::{Error, Result};

thread_local! {
    /// The runtimes (their `Shared`'s address) whose kernel this thread keeps out
    /// (`Sharing::with_kernel_out`): its own submissions to them are refused, decided
    /// with no lock (a `Batch::try_submit` that found the producer lock taken by a waiting
    /// thread said `WouldBlock` instead: found on an H200).
    static KEPT_OUT: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Whether this thread keeps `shared`'s kernel out (`Sharing::with_kernel_out`).
pub(crate) fn kept_out_here(shared: &Shared) -> bool {
    let id = shared as *const Shared as usize;
    KEPT_OUT.with(|k| k.borrow().contains(&id))
}

/// The runtime's side of it: counts, and since when it has looked idle.
#[derive(Default)]
pub(crate) struct Elastic {
    exits: AtomicU64,
    relaunches: AtomicU64,
    /// `(next, since)`: the runtime looked idle with `next` tasks reserved since `since`.
    idle: Mutex<Option<(u64, Instant)>>,
    /// Open peer links into this runtime (host/multi/peer_link.rs): their inboxes are drained
    /// by the relay warp only while the kernels run, so no idle exit while any is open.
    holds: std::sync::atomic::AtomicUsize,
    /// Those links, as (pushing runtime, its link index): when this runtime closes or
    /// faults, their entries are cleared, so that pushes waiting for room end
    /// (`resident_device::link`, L3').
    pub(crate) peers_in: Mutex<Vec<(std::sync::Weak<Shared>, usize)>>,
    /// The relay's slice count as last read, and when it last grew.
    slices: Mutex<(u64, Option<Instant>)>,
}

impl Shared {
    /// Whether another context took a time slice from the kernel within
    /// [`Residency::CONTENDED_HOLD`] (reads the relay's count).
    fn contended(&self) -> bool {
        let (count, _) = self.backend.cuda().map_or((0, 0), |c| c.time_slices());
        let mut s = self.elastic.slices.lock().unwrap_or_else(|e| e.into_inner());
        if count != s.0 {
            *s = (count, Some(Instant::now()));
        }
        s.1.is_some_and(|t| t.elapsed() < Residency::CONTENDED_HOLD)
    }

    /// The notifier thread's turn: exits if the runtime has been idle for the policy's
    /// time. Errors are left to the health polls (a fault is recorded there). Returns
    /// the period until the next turn if it differs from the policy's (`Auto` while
    /// contended: drained or not is checked every 50 µs).
    pub(crate) fn residency_tick(&self) -> Option<Duration> {
        let contended = self.config.residency == Residency::Auto && self.contended();
        // Parked: nothing to drain, no slice to see; the policy's period.
        let next = (contended && !self.backend.is_parked()).then_some(Residency::DRAIN_CHECK);
        self.residency_turn(contended);
        next
    }

    fn residency_turn(&self, contended: bool) {
        let Some(idle_time) = self.config.residency.idle_time(contended) else { return };
        if self.backend.is_parked() || self.life.is_closing() || self.held() {
            return;
        }
        let done = self.tracker.advance(&self.backend);
        let Ok(next) = self.producer.try_lock().map(|p| p.next) else { return };
        let now = Instant::now();
        let mut idle = self.elastic.idle.lock().unwrap_or_else(|e| e.into_inner());
        if done != next {
            *idle = None;
            return;
        }
        match *idle {
            Some((n, since)) if n == next && now - since >= idle_time => {
                *idle = None;
                drop(idle);
                let _ = self.release_if_idle();
            }
            Some((n, _)) if n == next => {}
            _ => *idle = Some((next, now)),
        }
    }

    /// Exits the resident kernel if every task reserved so far has completed; whether
    /// it did (false: busy, closing, or already exited).
    pub(crate) fn release_if_idle(&self) -> Result<bool> {
        self.fault()?;
        if self.life.is_closing() {
            return Err(self.stopped());
        }
        let p = self.producer.lock().unwrap_or_else(|e| e.into_inner());
        if self.backend.is_parked() || self.held() {
            return Ok(false);
        }
        self.park_if_idle(&p)
    }

    /// Keeps the kernels resident (launching them if they exited) until the matching
    /// [`Shared::unhold`]: a peer link into this runtime is open.
    pub(crate) fn hold(&self) -> Result<()> {
        self.elastic.holds.fetch_add(1, Ordering::SeqCst);
        let p = self.producer.lock().unwrap_or_else(|e| e.into_inner());
        let r = if p.closed {
            Err(Error::ShutDown)
        } else if p.kernel_out {
            if kept_out_here(self) {
                Err(Error::Config("a peer link into a runtime whose kernel this thread keeps out (Sharing::with_kernel_out)".into()))
            } else {
                // Another thread keeps the kernel out: try again once it is back.
                Err(Error::WouldBlock)
            }
        } else {
            self.fault().and_then(|()| self.ensure_resident())
        };
        drop(p);
        if let Err(e) = r {
            self.unhold();
            // (After the producer lock: `stopped` may record the fault.)
            return Err(if e == Error::ShutDown { self.stopped() } else { e });
        }
        Ok(())
    }

    /// `Sharing::with_kernel_out`: claims the hold first (from then on reservations of
    /// other threads wait, so the queue drains), then exits the kernel once every task
    /// submitted so far has completed, runs `f` on this thread, and lets the next
    /// reservation relaunch the kernel after. `Timeout` (the hold given back) if the
    /// queue does not drain by `deadline`.
    pub(crate) fn with_kernel_out<R>(&self, deadline: Option<Instant>, f: impl FnOnce() -> R) -> Result<R> {
        // Ends the hold however this ends (an error, a panic in `f`).
        struct Back<'a>(&'a Shared);
        impl Drop for Back<'_> {
            fn drop(&mut self) {
                let id = self.0 as *const Shared as usize;
                KEPT_OUT.with(|k| k.borrow_mut().retain(|&s| s != id));
                self.0.producer.lock().unwrap_or_else(|e| e.into_inner()).kernel_out = false;
            }
        }
        // The claim.
        loop {
            self.fault()?;
            if self.life.is_closing() {
                return Err(self.stopped());
            }
            if crate::queue::reservation::open_here(self) {
                return Err(Error::ReservationOpen);
            }
            if kept_out_here(self) {
                return Err(Error::Config("Sharing::with_kernel_out inside itself".into()));
            }
            let mut p = self.producer.lock().unwrap_or_else(|e| e.into_inner());
            if !p.kernel_out {
                if self.held() {
                    return Err(Error::Config(
                        "this runtime has open peer links into it (Link::peer): close them before keeping its kernel out".into(),
                    ));
                }
                if p.closed {
                    drop(p);
                    return Err(self.stopped());
                }
                p.kernel_out = true;
                KEPT_OUT.with(|k| k.borrow_mut().push(self as *const Shared as usize));
                break;
            }
            drop(p);
            if crate::util::deadline::passed(deadline) {
                return Err(Error::Timeout);
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        let back = Back(self);
        // The drain and the exit.
        loop {
            self.fault()?;
            if self.life.is_closing() {
                return Err(self.stopped());
            }
            let p = self.producer.lock().unwrap_or_else(|e| e.into_inner());
            if self.backend.is_parked() || self.backend.workers_gone() || self.park_if_idle(&p)? {
                break;
            }
            drop(p);
            if crate::util::deadline::passed(deadline) {
                return Err(Error::Timeout);
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        let r = f();
        drop(back);
        Ok(r)
    }

    /// Waits until no thread keeps the kernel out (`with_kernel_out`), or the runtime
    /// closes or faults (the caller's retry then says so).
    pub(crate) fn wait_kernel_back(&self) {
        while self.producer.lock().unwrap_or_else(|e| e.into_inner()).kernel_out {
            if self.life.is_closing() || self.fault().is_err() {
                return;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    pub(crate) fn unhold(&self) {
        self.elastic.holds.fetch_sub(1, Ordering::SeqCst);
    }

    fn held(&self) -> bool {
        self.elastic.holds.load(Ordering::SeqCst) > 0
    }

    /// Under the producer lock (`p`): exits the resident kernel if the queue is open and
    /// every task reserved so far has completed; whether it did.
    fn park_if_idle(&self, p: &crate::queue::producer::Producer) -> Result<bool> {
        if p.closed || self.tracker.advance(&self.backend) != p.next {
            return Ok(false);
        }
        self.bind()?;
        // A failure here leaves the kernels in an unknown state: the runtime's fault.
        let parked = self.backend.park(p.next, p.runs).map_err(|e| self.record_fault(e))?;
        if parked {
            self.elastic.exits.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(target: "resident", device = self.config.device, "resident kernel exited (idle)");
        }
        Ok(parked)
    }

    /// Runs `f` with no kernel of this runtime running and none launched until `f`
    /// returns: for driver calls that wait for running kernels (NCCL's module loads and
    /// frees, `host/multi/nccl.rs`). Exits the kernel if it is resident (once every task
    /// submitted so far has completed: a busy runtime is waited for), then holds the
    /// producer lock across `f`, so submissions from other threads wait for it (a
    /// `Batch::try_submit` gets `WouldBlock`).
    pub(crate) fn with_parked<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<R> {
        loop {
            self.fault()?;
            let p = self.producer.lock().unwrap_or_else(|e| e.into_inner());
            // Peer links into this runtime: parking would stop their inboxes' relay and
            // cut their running tasks short (they are not among the tasks it waits
            // for): refused while any is open.
            if self.held() {
                return Err(Error::Config(
                    "this runtime has open peer links into it (Link::peer): close them before parking it for NCCL".into(),
                ));
            }
            if self.backend.is_parked() || self.backend.workers_gone() || self.park_if_idle(&p)? {
                return f();
            }
            drop(p);
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }

    /// Called by every reservation, under the producer lock: launches the kernels again
    /// if they exited.
    pub(crate) fn ensure_resident(&self) -> Result<()> {
        if self.backend.is_parked() {
            self.backend.unpark()?;
            self.elastic.relaunches.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(target: "resident", device = self.config.device, "resident kernel relaunched");
        }
        Ok(())
    }

    pub(crate) fn residency_stats(&self) -> ResidencyStats {
        let (slices_taken, last_ns) = self.backend.cuda().map_or((0, 0), |c| c.time_slices());
        ResidencyStats {
            slices_taken,
            last_slice: Duration::from_nanos(last_ns),
            contended: self.config.residency == Residency::Auto && self.contended(),
            resident: !self.backend.is_parked() && !self.workers_gone(),
            exits: self.elastic.exits.load(Ordering::Relaxed),
            relaunches: self.elastic.relaunches.load(Ordering::Relaxed),
        }
    }
}
