//! A deadline for tests of blocking code: a regression that hangs fails the test
//! instead of hanging CI.

use std::sync::mpsc;
use std::time::Duration;

/// Runs `f` on a thread of its own and returns what it returns; panics if it has not
/// returned within `limit` (the thread is left behind), and passes a panic of `f` on.
pub fn within<T: Send + 'static>(limit: Duration, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::Builder::new()
        .name(format!("within: {what}"))
        .spawn(move || {
            let _ = tx.send(f());
        })
        .expect("a test thread");
    match rx.recv_timeout(limit) {
        Ok(v) => {
            let _ = worker.join();
            v
        }
        // `f` panicked (the sender is gone without a value): pass its panic on.
        Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(p) => std::panic::resume_unwind(p),
            Ok(()) => unreachable!("the worker ended without sending"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what} did not finish within {limit:?} (hung?)"),
    }
}
