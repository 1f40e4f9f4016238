//! Host callbacks: a Rust closure that runs on a driver thread when a stream reaches
//! that point (`cuLaunchHostFunc`). Work enqueued after it waits for it to return.
//!
//! The closure must not call CUDA (the driver forbids it from its callback thread: the
//! call fails or deadlocks) and should be short: it holds up the stream. It is `'static`
//! and `Send` because nothing bounds when it runs relative to the caller (a stream whose
//! earlier work failed never calls it; the box is then leaked, which is safe). A panic in
//! it is caught and printed: it must not unwind into the driver.

use cudarc::driver::sys;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::stream::Stream;
use crate::Result;
use crate::cuda::driver::check;

type Callback = Box<dyn FnOnce() + Send + 'static>;

unsafe extern "C" fn trampoline(data: *mut c_void) {
    // SAFETY: `data` is the Box<Callback> leaked by `on_host`, called exactly once.
    let f = unsafe { Box::from_raw(data as *mut Callback) };
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        eprintln!("resident::stream: a host callback panicked (the panic was caught)");
    }
}

impl Stream {
    /// Runs `f` on a driver thread once the work enqueued so far has completed; later
    /// work on this stream starts after `f` returns. Callbacks of one stream run in
    /// the order they were enqueued.
    pub fn on_host<F: FnOnce() + Send + 'static>(&self, f: F) -> Result<()> {
        self.gpu.bind()?;
        let data = Box::into_raw(Box::new(Box::new(f) as Callback)) as *mut c_void;
        let r = check(unsafe { sys::cuLaunchHostFunc(self.raw(), Some(trampoline), data) }, "cuLaunchHostFunc");
        if r.is_err() {
            // Not enqueued: the driver will never call it.
            drop(unsafe { Box::from_raw(data as *mut Callback) });
        }
        r
    }
}
