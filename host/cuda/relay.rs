//! The host side of the relay (`device/src/relay.rs` has the protocol): small batches
//! are published by one store into the mailbox in mapped pinned memory, with no driver
//! call; large ones by copies on the transfer stream. Both publish `tail`, so the
//! producer (which calls everything here under its lock) never lets them overlap:
//! - before a copy publication, it waits until the relay has published every relayed
//!   batch (`mailbox.relayed`, written by the relay after its `tail` store);
//! - before a relayed publication that follows copies, it waits until the transfer
//!   stream is idle (the copies, `tail` included, have landed), then tells the relay to
//!   start at this batch (`host_from`).
//!
//! Both waits are short (microseconds: a copy or a relay round) and bounded: they end
//! with the other publisher's progress, with the relay kernel's death (`DeviceFault`,
//! `KernelExited`: polled every 100 µs), or after [`HANDOVER_TIMEOUT`].

use cudarc::driver::sys::{self, CUfunction};
use resident_shared::relay::RelayMailbox;
use resident_shared::KernelParams;
use std::ffi::c_void;
use std::sync::Mutex;
use std::sync::atomic::{Ordering, fence};
use std::time::{Duration, Instant};

use super::driver::{Context, check};
use super::memory::PinnedAlloc;
use super::module::Module;
use super::stream::{Stream, StreamState};
use crate::{Error, Result};

/// Longest wait for the other publisher to finish: generous, since compute-sanitizer
/// slows the relay warp by orders of magnitude.
const HANDOVER_TIMEOUT: Duration = Duration::from_secs(30);

// SAFETY: the function handle is immutable; the rest is Send + Sync.
unsafe impl Send for Relay {}
unsafe impl Sync for Relay {}

pub(crate) struct Relay {
    /// The `resident_relay` kernel and the stream it stays resident on.
    kernel: CUfunction,
    stream: Stream,
    mailbox: PinnedAlloc,
    /// Batches of at most this many tasks go through the relay (0: none do).
    max_batch: u32,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// End of the last relayed batch not yet known to be published.
    relayed_end: Option<u64>,
    /// A copy publication may still be in flight on the transfer stream.
    copy_pending: bool,
}

impl Relay {
    pub fn new(ctx: &Context, max_batch: u32, module: &Module) -> Result<Self> {
        let mailbox = unsafe { PinnedAlloc::zeroed(ctx, size_of::<RelayMailbox>(), false) }?;
        let kernel = module.function("resident_relay")?;
        Ok(Self { kernel, stream: Stream::non_blocking(ctx, 0)?, mailbox, max_batch, state: Mutex::new(State::default()) })
    }

    /// Launches the relay warp (after the persistent kernel), if the relay is enabled.
    pub fn launch(&self, params: &KernelParams) -> Result<()> {
        if !self.enabled() {
            return Ok(());
        }
        let mut p = *params;
        let mut args = [&raw mut p as *mut c_void];
        check(
            unsafe { sys::cuLaunchKernel(self.kernel, 1, 1, 1, 32, 1, 1, 0, self.stream.raw(), args.as_mut_ptr(), std::ptr::null_mut()) },
            "cuLaunchKernel(resident_relay)",
        )
    }

    /// The relay kernel's stream: busy while it runs.
    pub fn state(&self) -> StreamState {
        if self.enabled() { self.stream.state() } else { StreamState::Idle }
    }

    pub fn enabled(&self) -> bool {
        self.max_batch > 0
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

    /// Publishes staged slots up to `end` through the relay (step 1 of the protocol).
    pub fn publish(&self, first: u64, end: u64, transfer: &Stream) -> Result<()> {
        let mut s = self.state.lock().unwrap();
        let m = self.mailbox();
        if s.copy_pending {
            wait(
                || match transfer.state() {
                    StreamState::Idle => Ok(true),
                    StreamState::Busy => Ok(false),
                    StreamState::Failed(e) => Err(e),
                },
                || Ok(()),
            )?;
            s.copy_pending = false;
            // Everything before `first` came by copy and has landed.
            unsafe { (&raw mut (*m).host_from).write_volatile(first) };
        }
        // Release: the staged slots (plain stores) and `host_from` before the mailbox
        // store; pairs with the relay's ld.acquire.sys of `host_tail`.
        fence(Ordering::Release);
        unsafe { (&raw mut (*m).host_tail).write_volatile(end) };
        s.relayed_end = Some(end);
        Ok(())
    }

    /// How far the relay has published.
    pub fn relayed(&self) -> u64 {
        let v = unsafe { (&raw const (*self.mailbox()).relayed).read_volatile() };
        fence(Ordering::Acquire);
        v
    }

    /// Before a copy publication: waits until the relay has published everything
    /// relayed so far.
    pub fn before_copy(&self) -> Result<()> {
        let mut s = self.state.lock().unwrap();
        if let Some(end) = s.relayed_end {
            let relayed = unsafe { &raw const (*self.mailbox()).relayed };
            wait(|| {
                let v = unsafe { relayed.read_volatile() };
                // Acquire: pairs with the relay's fence + system-scope store.
                fence(Ordering::Acquire);
                if v >= end {
                    return Ok(true);
                }
                Ok(false)
            }, || match self.stream.state() {
                StreamState::Busy => Ok(()),
                StreamState::Idle => Err(Error::KernelExited),
                StreamState::Failed(e) => Err(Error::DeviceFault(e.to_string())),
            })?;
            s.relayed_end = None;
        }
        s.copy_pending = true;
        Ok(())
    }
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
