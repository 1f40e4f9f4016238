//! Writing tasks in place: a [`Reservation`] holds sequence numbers of the ring, and
//! each task pushed into it is checked and written straight into its slot (the ring's
//! host memory: the host ring on CUDA, the ring itself on the CPU backend), with no
//! batch in between and no copy. Every full piece of the reservation (1024 tasks over
//! the host ring) is committed as soon as it is written, so the workers run the first
//! tasks while the rest are written: the write-in-place path of docs/architecture.md.

use resident_shared::{Collected, Task};
use std::cell::RefCell;
use std::marker::PhantomData;

use crate::queue::producer::{self, Batch, Origin, Promise, Source, WhenFull};
use crate::runtime::Shared;
use crate::{Error, Result, Runtime, Ticket};

thread_local! {
    /// The runtimes (their `Shared`'s address) of which this thread holds an open
    /// reservation.
    /// (the runtime's `Shared` address, the reservation's first sequence number).
    static OPEN: RefCell<Vec<(usize, u64)>> = const { RefCell::new(Vec::new()) };
}

/// Whether this thread holds an open reservation of `shared`'s runtime: then a batch
/// reserved now would wait for it forever (`Error::ReservationOpen`).
pub(crate) fn open_here(shared: &Shared) -> bool {
    open_before(shared, u64::MAX)
}

/// Whether this thread holds an open reservation of `shared`'s runtime that starts
/// before `end`: then nothing from it on completes until this thread commits it, and
/// a wait here for a task before `end` (a ticket, a drain) would wait for itself.
pub(crate) fn open_before(shared: &Shared, end: u64) -> bool {
    let id = shared as *const Shared as usize;
    OPEN.with(|o| o.borrow().iter().any(|&(s, first)| s == id && first < end))
}

/// Room for `len` tasks in the ring, written one by one ([`Reservation::push`]) and
/// committed piece by piece as they are written; [`Reservation::commit`] publishes the
/// rest and returns the ticket of all of them.
///
/// Unlike [`Runtime::submit`], a reservation is not all-or-nothing: each push is
/// checked on its own, a refused one ([`Error::InvalidTask`], its `index` the slot it
/// would have taken) writes nothing and the reservation goes on. Slots left unwritten
/// when it is committed or dropped run as no-ops. While it is open, it holds back
/// every batch reserved after it (they are published in sequence order), and the
/// memory of a buffer dropped meanwhile stays until it is committed and its tasks have
/// run: commit it soon. The thread that holds it gets [`Error::ReservationOpen`] from
/// what would wait for it (a submit, a reservation, `close`, a wait for a later
/// ticket, a buffer read), and it stays on that thread (it is not `Send`). Leaking it
/// (`mem::forget`) holds back every later batch until shutdown.
///
/// ```
/// # let rt = resident::Runtime::with_config(resident::RuntimeConfig::cpu()).unwrap();
/// use resident::Task;
/// let mut r = rt.reserve(1000)?;
/// for i in 0..1000 {
///     r.push(Task::noop(i))?;
/// }
/// r.commit()?.wait()?;
/// # Ok::<(), resident::Error>(())
/// ```
#[must_use = "a reservation holds back every later batch until it is committed or dropped"]
pub struct Reservation<'a> {
    rt: &'a Runtime,
    batch: Option<Batch>,
    /// Its first sequence number (its mark in `OPEN`).
    first: u64,
    len: usize,
    /// Tasks written (or skipped) so far: the next slot is `first + written`.
    written: usize,
    /// The piece being written, and whether its room was waited for.
    piece: usize,
    room: bool,
    checks: Collected,
    /// Not `Send`: the open mark lives in this thread's `OPEN`.
    _here: PhantomData<*const ()>,
}

impl Runtime {
    /// Reserves `len` slots of the ring for tasks to be written in place
    /// ([`Reservation`]), at most [`BackendInfo::capacity`](crate::BackendInfo::capacity) ([`Error::ExceedsQueue`]: a
    /// reservation holds back every later batch while it is open, and its unwritten
    /// slots are written as no-ops when it ends; the ring bounds both). Fails like
    /// [`Runtime::submit`] after shutdown or a fault.
    pub fn reserve(&self, len: usize) -> Result<Reservation<'_>> {
        let batch = producer::reserve(&self.shared, Source::InPlace(len), false, WhenFull::Wait, Origin::User, Promise::AllOrNothing)?;
        let id = &*self.shared as *const Shared as usize;
        let first = batch.first;
        OPEN.with(|o| o.borrow_mut().push((id, first)));
        Ok(Reservation {
            rt: self,
            first,
            batch: Some(batch),
            len,
            written: 0,
            piece: 0,
            room: false,
            checks: Collected::new(),
            _here: PhantomData,
        })
    }
}

impl Reservation<'_> {
    /// Tasks it holds.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it holds no task.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Tasks still to be written.
    pub fn remaining(&self) -> usize {
        self.len - self.written
    }

    /// Checks `task` as [`Runtime::submit`] would and writes it into the next slot.
    /// A full piece is committed at once, so the workers may run it before this
    /// returns. Refused: [`Error::InvalidTask`] (its `index` the slot in the
    /// reservation; nothing written, the slot stays for the next push), [`Error::ReservationFull`], or the runtime's fault or shutdown.
    pub fn push(&mut self, task: Task) -> Result<()> {
        let slot = self.written;
        self.extend(std::slice::from_ref(&task)).map_err(|e| match e {
            Error::InvalidTask { reason, .. } => Error::InvalidTask { index: slot, reason },
            e => e,
        })
    }

    /// Pushes every task of `tasks`, all or none: the first bad one refuses the call
    /// ([`Error::InvalidTask`], its `index` the task's place in `tasks`) and nothing of
    /// it is written; too many for the room left is [`Error::ReservationFull`]. One
    /// check of the registries for the whole slice, so cheaper per task than `push`.
    pub fn extend(&mut self, tasks: &[Task]) -> Result<()> {
        if tasks.len() > self.remaining() {
            return Err(Error::ReservationFull(self.len));
        }
        let shared = &self.rt.shared;
        {
            let reg = shared.registries.read();
            for (index, t) in tasks.iter().enumerate() {
                crate::image::validate::check_with(t, &shared.set, &reg.registry, &reg.counters, &mut self.checks)
                    .map_err(|reason| Error::InvalidTask { index, reason })?;
            }
        }
        self.write(tasks)
    }

    /// Writes `tasks` (checked) into the next slots, piece by piece: waits for a
    /// piece's room before its first task, commits it after its last.
    fn write(&mut self, mut tasks: &[Task]) -> Result<()> {
        let batch = self.batch.as_ref().expect("live until commit or drop");
        let shared = &self.rt.shared;
        while !tasks.is_empty() {
            let piece = batch.pieces[self.piece];
            if !self.room {
                batch.room(shared, &piece)?;
                self.room = true;
            }
            let seq = batch.first + self.written as u64;
            let k = tasks.len().min((piece.end - seq) as usize);
            // SAFETY: slots `seq..seq + k` are this reservation's alone (reserved), free
            // (their piece's room was waited for), and not read before the piece is
            // committed.
            unsafe { shared.backend.stage(seq, &tasks[..k], batch.place.at(self.written as u32)) };
            self.written += k;
            tasks = &tasks[k..];
            if seq + k as u64 == piece.end {
                batch.commit(shared, &piece, false)?;
                self.piece += 1;
                self.room = false;
            }
        }
        Ok(())
    }

    /// Publishes what is left (unwritten slots run as no-ops) and returns the ticket of
    /// every task of the reservation.
    pub fn commit(mut self) -> Result<Ticket> {
        self.finish()?;
        let batch = self.batch.take().expect("live until commit or drop");
        self.close();
        Ok(Ticket { state: batch.ticket, shared: self.rt.shared.clone() })
    }

    /// Clears this thread's open mark (once).
    fn close(&mut self) {
        let id = &*self.rt.shared as *const Shared as usize;
        OPEN.with(|o| {
            let mut o = o.borrow_mut();
            if let Some(i) = o.iter().position(|&(s, first)| s == id && first == self.first) {
                o.swap_remove(i);
            }
        });
    }

    /// Fills the unwritten slots with no-ops (all of them committed by the last write).
    fn finish(&mut self) -> Result<()> {
        let noops = [Task::noop(0); 256];
        while self.written < self.len {
            let k = (self.len - self.written).min(noops.len());
            self.write(&noops[..k])?;
        }
        Ok(())
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.batch.is_some() {
            // Dropped uncommitted: its slots must still be published (as no-ops where
            // unwritten), or every later batch would wait for them. A failure here is
            // the runtime's fault or shutdown, which resolves every ticket.
            let _ = self.finish();
            self.close();
        }
    }
}

impl std::fmt::Debug for Reservation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reservation").field("len", &self.len).field("written", &self.written).finish()
    }
}
