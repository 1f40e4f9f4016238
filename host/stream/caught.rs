//! Panics caught where the stream API runs user code (host callbacks, kernels on the
//! CPU device, a CPU stream's operations): what they say, and how their payload is
//! disposed of.
//!
//! A panic payload is a user value (`panic_any`), and its `Drop` may panic in turn.
//! Dropped outside a `catch_unwind`, that second panic would escape the very boundary
//! that caught the first: out of a CPU stream's thread (killing it, so that everything
//! waiting for the stream would wait forever), or out of the `extern "C"` trampoline of
//! a CUDA host callback (which aborts the process). So a payload is dropped only inside
//! `catch_unwind`, and the payload of a panic in that drop is forgotten, never dropped:
//! what std does with a thread's result.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A caught panic.
pub(crate) type Payload = Box<dyn Any + Send>;

/// What a caught panic says: its message if it is a string, else "a panic".
pub(crate) fn panic_message(p: &(dyn Any + Send)) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_else(|| "a panic".into())
}

/// Drops `p` without letting a panic of its `Drop` unwind: that panic's own payload is
/// leaked (a `Drop` that panics again at every level would never end otherwise).
pub(crate) fn discard(p: Payload) {
    drop_caught(p);
}

/// Drops `value` inside `catch_unwind`: a `Drop` that panics is contained, and its
/// payload discarded. True if the drop panicked.
pub(crate) fn drop_caught<T>(value: T) -> bool {
    match catch_unwind(AssertUnwindSafe(move || drop(value))) {
        Ok(()) => false,
        Err(second) => {
            std::mem::forget(second);
            true
        }
    }
}

/// Runs `f`, catching a panic (its message, the payload discarded as above).
pub(crate) fn run_caught<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let msg = panic_message(&*p);
        discard(p);
        msg
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A payload whose drop panics with the next one, `n` levels deep.
    struct Bomb(u32);
    impl Drop for Bomb {
        fn drop(&mut self) {
            if self.0 > 0 {
                std::panic::panic_any(Bomb(self.0 - 1));
            }
        }
    }

    #[test]
    fn payloads_whose_drop_panics_do_not_escape() {
        assert_eq!(run_caught(|| std::panic::panic_any(Bomb(3))), Err("a panic".to_string()));
        assert_eq!(run_caught(|| panic!("plain {}", 1)), Err("plain 1".to_string()));
        assert_eq!(run_caught(|| 5), Ok(5));
        assert!(drop_caught(Bomb(2)));
        assert!(!drop_caught(Bomb(0)));
    }
}
