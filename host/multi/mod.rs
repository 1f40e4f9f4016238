//! Several runtimes together: links through the host and peer links through device
//! memory (a task of one runtime pushes tasks into another's queue), NCCL collectives
//! between runtimes' buffers, and the launcher's rendezvous for multi-process jobs.

pub(crate) mod launcher;
pub(crate) mod link;
pub mod nccl;
pub(crate) mod peer_link;
