//! Pinned frees and resident kernels, for the whole process.
//!
//! `cuMemFreeHost` waits for the running kernels before it frees, and a resident
//! kernel does not end while its runtime lives: a pinned free while one runs never
//! returns. That holds across devices too: closing one device's runtime hung in its
//! pinned frees while another device's runtime stayed resident (2 x H200, 2026-11-26,
//! docs/scaling.md), and within one device a pinned buffer of the stream API dropped
//! beside a resident runtime hung the same way.
//!
//! So every pinned free of the process goes through [`free_host`], and every launch of
//! a persistent kernel holds a [`Resident`] from before its launch until its kernels
//! are seen to have ended. While any is held, pinned frees are deferred (the memory is
//! kept, with its context); the drop of the last one frees them, under the same lock
//! that a launch takes first, so no launch starts during those frees. A kernel that
//! never ends (a wedged runtime, whose `Resident` is forgotten with it) keeps every
//! later pinned free of the process deferred: memory is kept, nothing hangs.

use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

use crate::driver::context::Context;

struct State {
    /// Persistent kernels that may be running now, on any device.
    resident: usize,
    /// What waits until `resident` is zero.
    deferred: Vec<Deferred>,
}

enum Deferred {
    /// Pinned memory of a context.
    Pinned(Context, usize),
    /// A call that may wait for running kernels (NCCL's communicator destroy).
    Call(Box<dyn FnOnce() + Send>),
}

impl Deferred {
    fn run(self) {
        match self {
            // SAFETY: allocated by cuMemHostAlloc, no longer used (its owner dropped
            // it), and no resident kernel runs.
            Deferred::Pinned(ctx, host) => unsafe { free_now(&ctx, host) },
            Deferred::Call(f) => f(),
        }
    }
}

static STATE: Mutex<State> = Mutex::new(State { resident: 0, deferred: Vec::new() });

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Held from before a persistent kernel's launch until it is seen to have ended.
#[derive(Debug)]
pub(crate) struct Resident(());

impl Resident {
    /// Counts a kernel about to launch: pinned frees from now on wait for it.
    pub fn launching() -> Self {
        state().resident += 1;
        Self(())
    }
}

impl Drop for Resident {
    fn drop(&mut self) {
        let mut st = state();
        st.resident -= 1;
        if st.resident == 0 {
            // Under the lock: no launch starts until these are done. (A launch meanwhile
            // waits as long as a free waits for other kernels, the stream API's
            // included: a stall, never a cycle, since with no resident kernel every
            // ticket a kernel may wait for has completed.)
            for d in std::mem::take(&mut st.deferred) {
                d.run();
            }
        }
    }
}

/// Frees pinned memory `host` of `ctx` now if no resident kernel runs in the process,
/// else once none does.
///
/// # Safety
/// `host` was allocated by `cuMemHostAlloc` in `ctx`, and nothing uses it any more.
pub(crate) unsafe fn free_host(ctx: &Context, host: *mut c_void) {
    if ctx.is_faulted() {
        // A dead context runs nothing, and its reset (the next runtime on the device)
        // reclaims every allocation in it: keep neither the memory's free nor the
        // context (a deferred free holding it would refuse that next runtime).
        return;
    }
    let mut st = state();
    if st.resident > 0 && !free_now_asked() {
        st.deferred.push(Deferred::Pinned(ctx.clone(), host as usize));
        return;
    }
    // SAFETY: the caller's.
    unsafe { free_now(ctx, host as usize) };
}

/// `RESIDENT_PINNED_FREE_NOW` set: frees are not deferred (the diagnosis that showed the
/// hang, docs/scaling.md). Read once.
fn free_now_asked() -> bool {
    static ASKED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ASKED.get_or_init(|| std::env::var_os("RESIDENT_PINNED_FREE_NOW").is_some())
}

/// Runs `f` now if no resident kernel runs in the process, else once none does: for
/// driver calls that wait for running kernels (NCCL's communicator destroy frees pinned
/// memory).
pub(crate) fn defer(f: impl FnOnce() + Send + 'static) {
    let mut st = state();
    if st.resident > 0 {
        st.deferred.push(Deferred::Call(Box::new(f)));
        return;
    }
    f();
}

unsafe fn free_now(ctx: &Context, host: usize) {
    let _ = ctx.bind();
    // SAFETY: the callers'.
    unsafe { sys::cuMemFreeHost(host as *mut c_void) };
}
