//! Host callbacks: a Rust closure that runs when a stream reaches that point. Work
//! enqueued after it waits for it to return. On a GPU it runs on a driver thread
//! (`cuLaunchHostFunc`); on the CPU device, on the stream's own thread.
//!
//! The closure must not call CUDA (the driver forbids it from its callback thread: the
//! call fails or deadlocks), and on the CPU device the stream API refuses its blocking
//! calls there (`synchronize`, `to_vec`, ...: they could wait for work queued behind the
//! callback). It should be short: it holds up the stream. It is `'static` and `Send`
//! because nothing bounds when it runs relative to the caller (a stream whose earlier
//! work failed never calls it; the box is then leaked on CUDA, dropped unrun on the CPU,
//! a panic of that drop contained, both safe).
//!
//! A panic in it is caught and printed: it must not unwind into the driver, nor fail a
//! CPU stream (as it cannot fail a CUDA one). Its payload is dropped inside the catch
//! too, and a panic of that drop is caught and its payload leaked (`super::caught`): a
//! payload whose `Drop` panics neither aborts the process from the `extern "C"`
//! trampoline nor kills a CPU stream's thread.
//!
//! Callbacks are never captured into a graph (a `FnOnce` runs once): `on_host` is an
//! error while the stream captures, checked under the stream's capture gate so that no
//! capture can begin between the check and the enqueue.

use cudarc::driver::sys;
use std::ffi::c_void;

use super::caught;
use super::raw::RawStream;
use super::stream::Stream;
use crate::Result;
use crate::driver::context::check;

type Callback = Box<dyn FnOnce() + Send + 'static>;

/// Runs a callback; a panic is reported, never propagated (nor is one of its payload's
/// `Drop`).
fn run_callback(f: impl FnOnce()) {
    if let Err(msg) = caught::run_caught(f) {
        crate::util::report::report!(error, "a stream's host callback panicked (the panic was caught): {msg}");
    }
}

unsafe extern "C" fn trampoline(data: *mut c_void) {
    // SAFETY: `data` is the Box<Callback> leaked by `on_host`, called exactly once: it
    // was enqueued under the stream's capture gate and join lock, after the driver said
    // the stream was not capturing, so no graph holds it and nothing replays it.
    let f = unsafe { Box::from_raw(data as *mut Callback) };
    // `f` is moved into the catch: its captures are dropped inside it too.
    run_callback(f);
}

impl Stream {
    /// Runs `f` on the host once the work enqueued so far has completed; later work on
    /// this stream starts after `f` returns. Callbacks of one stream run in the order
    /// they were enqueued. An error (`Error::Config`) while the stream captures.
    pub fn on_host<F: FnOnce() + Send + 'static>(&self, f: F) -> Result<()> {
        const WHAT: &str = "a host callback (on_host)";
        self.gpu.bind()?;
        let _once = self.capture_gate.once(WHAT)?;
        let s = match &self.raw {
            RawStream::Cuda(s) => s,
            RawStream::Cpu(q) => {
                return q.run(move || {
                    run_callback(f);
                    Ok(())
                });
            }
        };
        let data = Box::into_raw(Box::new(Box::new(f) as Callback)) as *mut c_void;
        // Under the gate no capture of this `Stream` begins; `enqueue_uncaptured` refuses
        // if the stream joined another stream's capture (by waiting for one of its
        // events), and no wait can make it join before the enqueue.
        let r = s.enqueue_uncaptured(WHAT, |raw| {
            // SAFETY: a live stream of the bound context; `trampoline` takes `data` back
            // as the Box<Callback> it is, once (see there).
            check(unsafe { sys::cuLaunchHostFunc(raw, Some(trampoline), data) }, "cuLaunchHostFunc")
        });
        if r.is_err() {
            // SAFETY: not enqueued (refused, or the call failed), so the driver will never
            // call `trampoline` with `data`: this is the only owner of the box leaked above.
            let f = unsafe { Box::from_raw(data as *mut Callback) };
            caught::drop_caught(f);
        }
        r
    }
}
