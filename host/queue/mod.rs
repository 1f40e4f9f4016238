//! The host side of the queue protocol: producers ([`producer`]) and the completion
//! tracker ([`completions`]) that turns the device's completion records into finished
//! tickets. The device side is `device/src/queue.rs`; docs/architecture.md has both.

pub(crate) mod batch;
pub(crate) mod completions;
pub(crate) mod helpers;
pub(crate) mod notifier;
pub(crate) mod partners;
pub(crate) mod phases;
pub(crate) mod prefix;
pub(crate) mod producer;
pub(crate) mod publisher;
pub(crate) mod registrations;
pub(crate) mod reservation;
pub(crate) mod run_ends;
pub(crate) mod task_list;
pub(crate) mod ticket;
pub(crate) mod ticket_state;
