//! The runtime as its buffers and counters see it (`crate::memory::owner::Owner`).

use std::time::Instant;

use crate::backend::Backend;
use crate::memory::owner::Owner;
use crate::memory::reclaim::Held;
use crate::memory::registry::Registries;
use crate::runtime::Shared;
use crate::util::read_mostly::ReadMostly;
use crate::{Error, Result};

impl Owner for Shared {
    fn backend(&self) -> &Backend {
        &self.backend
    }
    fn registries(&self) -> &ReadMostly<Registries> {
        &self.registries
    }
    fn usable(&self) -> Result<()> {
        Shared::usable(self)
    }
    fn reclaim(&self) {
        Shared::reclaim(self)
    }
    fn defer(&self, target: u64, held: Held) {
        Shared::defer(self, target, held)
    }
    fn explain(&self, e: Error) -> Error {
        Shared::explain(self, e)
    }
    fn published(&self) -> u64 {
        self.publisher.published()
    }
    fn next_seq(&self) -> u64 {
        self.producer.lock().unwrap_or_else(|e| e.into_inner()).next
    }
    fn settle(&self, from: u64, deadline: Option<Instant>) -> Result<()> {
        Shared::settle(self, from, deadline)
    }
}
