//! What the runtime has to say on its own, with no caller to return it to (a device
//! fault, memory leaked behind a task that never returns, a fallback to the CPU, a
//! host callback's panic): a `tracing` event for the application's subscriber, or, in
//! a process that installed none, a line on stderr, since such news must not go
//! unnoticed. Routine events (residency exits and relaunches, submissions, waits) go
//! to `tracing` alone.

/// Reports `format!(...)` at `tracing` level `$level` (`error`, `warn`, `info`), or on
/// stderr when no global subscriber is set.
macro_rules! report {
    ($level:ident, $($arg:tt)+) => {
        if tracing::dispatcher::has_been_set() {
            tracing::$level!(target: "resident", "{}", format_args!($($arg)+));
        } else {
            eprintln!("resident: {}", format_args!($($arg)+));
        }
    };
}
pub(crate) use report;
