//! Host callbacks: a Rust closure that runs when a stream reaches that point. Work
//! enqueued after it waits for it to return. On a GPU it runs on a driver thread
//! (`cuLaunchHostFunc`); on the CPU device, on the stream's own thread.
//!
//! The closure must not call CUDA (the driver forbids it from its callback thread: the
//! call fails or deadlocks), and on the CPU device the stream API refuses its blocking
//! calls there (`synchronize`, `to_vec`, ...: they could wait for work queued behind the
//! callback). It should be short: it holds up the stream. It is `'static` and `Send`
//! because nothing bounds when it runs relative to the caller (a stream whose earlier
//! work failed never calls it; the box is then leaked on CUDA, dropped on the CPU, both
//! safe). A panic in it is caught and printed: it must not unwind into the driver, nor
//! fail a CPU stream (as it cannot fail a CUDA one). Callbacks are never captured into a
//! graph (a `FnOnce` runs once): `on_host` is an error while the stream captures.

use cudarc::driver::sys;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::raw::RawStream;
use super::stream::Stream;
use crate::Result;
use crate::cuda::driver::check;

type Callback = Box<dyn FnOnce() + Send + 'static>;

fn run_caught(f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        eprintln!("resident::stream: a host callback panicked (the panic was caught)");
    }
}

unsafe extern "C" fn trampoline(data: *mut c_void) {
    // SAFETY: `data` is the Box<Callback> leaked by `on_host`, called exactly once (the
    // stream was not capturing, so no graph replays it).
    let f = unsafe { Box::from_raw(data as *mut Callback) };
    run_caught(f);
}

impl Stream {
    /// Runs `f` on the host once the work enqueued so far has completed; later work on
    /// this stream starts after `f` returns. Callbacks of one stream run in the order
    /// they were enqueued.
    pub fn on_host<F: FnOnce() + Send + 'static>(&self, f: F) -> Result<()> {
        self.gpu.bind()?;
        let s = match &self.raw {
            RawStream::Cuda(s) => s,
            RawStream::Cpu(q) => {
                return self.cpu_once(q, "a host callback (on_host)", move || {
                    run_caught(f);
                    Ok(())
                });
            }
        };
        s.refuse_capture("a host callback (on_host)")?;
        let data = Box::into_raw(Box::new(Box::new(f) as Callback)) as *mut c_void;
        let r = check(unsafe { sys::cuLaunchHostFunc(s.raw(), Some(trampoline), data) }, "cuLaunchHostFunc");
        if r.is_err() {
            // Not enqueued: the driver will never call it.
            drop(unsafe { Box::from_raw(data as *mut Callback) });
        }
        r
    }
}
