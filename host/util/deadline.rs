//! Deadlines from user-given timeouts, which may be as long as `Duration::MAX`: one
//! too far in the future for the clock (`Instant + Duration` would panic) saturates to
//! "no deadline" (`None`), and every wait takes an `Option<Instant>`.

use std::time::{Duration, Instant};

/// The instant `timeout` from now; `None` if the clock cannot say (no deadline).
pub(crate) fn after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

/// Time left until `deadline` (zero once passed); `None` for no deadline.
pub(crate) fn remaining(deadline: Option<Instant>) -> Option<Duration> {
    deadline.map(|d| d.saturating_duration_since(Instant::now()))
}

/// Whether `deadline` has passed (never, for no deadline).
pub(crate) fn passed(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}
