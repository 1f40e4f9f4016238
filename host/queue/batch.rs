//! A batch submitted with options ([`Runtime::batch`]): inline results kept, published
//! while it is checked, refused rather than waited for, or unchecked. `Runtime::submit`
//! is the plain case.

use crate::queue::producer::{self, Bad, Origin, Refusal, Source, WhenFull};
use crate::{Error, Result, Runtime, Task, Ticket};

/// A batch of tasks and how to submit it ([`Runtime::batch`]); nothing is submitted
/// until one of [`Batch::submit`], [`Batch::try_submit`] or [`Batch::submit_unchecked`].
#[must_use = "a batch is submitted only by `submit`, `Batch::try_submit` or `Batch::submit_unchecked`"]
pub struct Batch<'a> {
    rt: &'a Runtime,
    tasks: &'a [Task],
    results: bool,
    pipelined: bool,
}

impl Runtime {
    /// `tasks` as a batch to submit with options: [`Batch::results`],
    /// [`Batch::pipelined`], then [`Batch::submit`], [`Batch::try_submit`] or
    /// [`Batch::submit_unchecked`]. `rt.batch(&tasks).submit()` is `rt.submit(&tasks)`.
    pub fn batch<'a>(&'a self, tasks: &'a [Task]) -> Batch<'a> {
        Batch { rt: self, tasks, results: false, pipelined: false }
    }
}

impl Batch<'_> {
    /// The ticket keeps each task's inline result ([`Ticket::results`]).
    pub fn results(mut self) -> Self {
        self.results = true;
        self
    }

    /// A large batch (4096 tasks or more) is published piece by piece as its check
    /// goes, so the workers start on its first tasks while the host still checks the
    /// rest, instead of after the whole batch is checked. The price is the
    /// all-or-nothing promise: a refused task fails the submission with
    /// [`Error::PartlyRun`]; its tasks before `ran` have run and completed when it
    /// returns (how they ended: `ran_failed`), none from `ran` on runs (their slots run
    /// as no-ops). `ran` is at most the bad task's index: the batch is checked in parts
    /// of 1024 tasks and published in pieces (runs of up to 1024 tasks on CUDA, 4096
    /// on the CPU backend), and what runs is the pieces that lie wholly within the parts
    /// before the bad task's. If nothing ran, the error is the refusal itself, as
    /// [`Runtime::submit`] reports it. A smaller batch, or any batch on CUDA without
    /// `RuntimeConfig::relay_publish`, is checked whole first, exactly as by `submit`.
    /// A panic in a task type's `declare` reaches the caller once the part before it
    /// has completed. Since a refusal waits for the part that ran, a task of it waiting
    /// on a counter that only later work signals holds the call until it is signalled.
    /// Only with [`Batch::submit`]: the others refuse it (`Error::Config`).
    pub fn pipelined(mut self) -> Self {
        self.pipelined = true;
        self
    }

    /// Validates and submits the batch, waiting for ring space if needed: as
    /// [`Runtime::submit`], with the options given.
    pub fn submit(self) -> Result<Ticket> {
        if !self.pipelined {
            return self.rt.submit_inner(self.tasks, self.results, WhenFull::Wait);
        }
        let shared = &self.rt.shared;
        match producer::submit_pipelined(shared, self.tasks, self.results) {
            Ok(state) => Ok(Ticket { state, shared: shared.clone() }),
            Err(Refusal::Error(e)) => Err(e),
            Err(Refusal::PartlyRun { ticket, ran, cause }) => {
                let ticket = Ticket { state: ticket, shared: shared.clone() };
                // The published part (and the no-ops after it) complete before the
                // refusal is reported; a fault or shutdown meanwhile is the answer.
                let ran_failed = match ticket.wait() {
                    Ok(()) => None,
                    Err(e @ Error::TaskFailed { .. }) => Some(Box::new(e)),
                    Err(e) => {
                        cause.leak();
                        return Err(e);
                    }
                };
                match cause {
                    Bad::Refused(cause) => Err(Error::PartlyRun { ran, cause: Box::new(cause), ran_failed }),
                    Bad::Panicked(payload) => std::panic::resume_unwind(payload),
                }
            }
        }
    }

    /// Like [`Batch::submit`], but fails with [`Error::QueueFull`] instead of waiting
    /// when the ring cannot take the whole batch now, and with [`Error::WouldBlock`]
    /// instead of waiting for another thread (one that holds a lock it needs, or has
    /// just reserved a list run and not yet written where it ends). Nothing of a
    /// refused batch runs; try again.
    pub fn try_submit(self) -> Result<Ticket> {
        if self.pipelined {
            return Err(Error::Config("a pipelined batch waits for ring space: submit it with `submit`".into()));
        }
        self.rt.submit_inner(self.tasks, self.results, WhenFull::Fail)
    }

    /// Submits without the host-side check: the tasks reach the device as they are, and
    /// the device's own check (opcode, buffer handle, generation, element type, range)
    /// is all that stands between a bad task and memory. A task it refuses completes
    /// with an error status ([`Error::TaskFailed`]) and touches nothing. For tests of
    /// that check, for callers who validated elsewhere, and for the tasks only this
    /// accepts (types that declare themselves `UNCHECKED`): raw addresses
    /// ([`Task::axpy_raw`]) and fault injection ([`Task::fault_trap`],
    /// [`Task::fault_illegal_address`]). The ticket keeps the tasks' inline results.
    ///
    /// # Safety
    /// No opcode may be the runtime's own (the terminate sentinel, a list chunk:
    /// refused; the runtime overwrites `flags` and `seg`); otherwise tasks are as
    /// unchecked as a raw kernel launch's arguments: a valid handle with a wrong offset
    /// is still refused, but nothing checks that two tasks running at once do not write
    /// the same memory, a raw-address task writes wherever its addresses point, and a
    /// fault-injection task kills the runtime (every ticket fails with
    /// [`Error::DeviceFault`]).
    pub unsafe fn submit_unchecked(self) -> Result<Ticket> {
        if self.pipelined {
            return Err(Error::Config("an unchecked batch is not pipelined: submit it without `pipelined`".into()));
        }
        if let Some((index, reason)) =
            self.tasks.iter().enumerate().find_map(|(i, t)| crate::image::validate::not_reserved(t).err().map(|r| (i, r)))
        {
            return Err(Error::InvalidTask { index, reason });
        }
        let shared = &self.rt.shared;
        let state = producer::submit(shared, Source::Host(self.tasks), true, WhenFull::Wait, Origin::Unchecked)?;
        Ok(Ticket { state, shared: shared.clone() })
    }
}
