//! Small pieces that every layer may use and that use nothing of the runtime's: the
//! synchronization door for loom, a striped counter, a read-mostly lock, deadlines, and
//! the runtime's own reports (`tracing`, or stderr).

pub(crate) mod accounting;
pub(crate) mod deadline;
pub(crate) mod read_mostly;
pub(crate) mod report;
pub(crate) mod striped;
pub(crate) mod sync;
#[cfg(test)]
pub(crate) mod timing;
