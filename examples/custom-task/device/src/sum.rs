//! A reduction across tasks, with a device counter between the two stages: every
//! [`SumSquares`] task writes one partial and signals the counter; the [`Total`] task,
//! submitted in the same batch, waits until the counter says every partial is written
//! (`Task::after`), then adds them up. No host round trip between the stages.

use bytemuck::{Pod, Zeroable};
use resident_device::{ArgError, CounterId, Declare, DeviceTask, Slice, Status, TaskCx, TaskId};

/// `partials[index] = sum of x[i]^2` over `x` (f32: each lane sums its elements, then
/// the warp adds its lanes up); result: the number of elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct SumSquares {
    pub x: Slice<f32>,
    pub partials: Slice<f32>,
    pub index: u32,
}

impl DeviceTask for SumSquares {
    const ID: TaskId = TaskId(0x202);

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.read(self.x);
        d.write(self.partials);
        if self.index >= self.partials.len {
            return Err(ArgError::IndexOutOfRange { index: self.index, len: self.partials.len });
        }
        Ok(())
    }

    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let (x, partials) = (cx.lookup(self.x), cx.lookup(self.partials));
        let (x, partials) = (x.view()?, partials.view()?);
        if self.index >= partials.len() {
            return Err(Status::OutOfRange);
        }
        let mut acc = 0f32;
        for i in cx.lane_range(x.len()) {
            let v = x.read(i)?;
            acc += v * v;
        }
        let sum = cx.warp_sum_f32(acc);
        if cx.lane() == 0 {
            partials.write(self.index, sum)?;
        }
        Ok(x.len() as u64)
    }
}

/// `total[0] = sum of partials`: run it after every partial is written (wait on the
/// counter the [`SumSquares`] tasks signal); result: the number of partials.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Total {
    pub partials: Slice<f32>,
    pub total: Slice<f32>,
}

impl DeviceTask for Total {
    const ID: TaskId = TaskId(0x203);

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.read(self.partials);
        d.write(self.total);
        if self.total.len == 0 { Err(ArgError::Bad("total needs one element")) } else { Ok(()) }
    }

    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let (partials, total) = (cx.lookup(self.partials), cx.lookup(self.total));
        let (partials, total) = (partials.view()?, total.view()?);
        if total.is_empty() {
            return Err(Status::BadArgs);
        }
        let mut acc = 0f32;
        for i in cx.lane_range(partials.len()) {
            acc += partials.read(i)?;
        }
        let sum = cx.warp_sum_f32(acc);
        if cx.lane() == 0 {
            total.write(0, sum)?;
        }
        Ok(partials.len() as u64)
    }
}

/// The same reduction with its split on the device: pushes one [`SumPart`] for each of
/// `partials`' elements (`x` cut into chunks of `ceil(x.len / parts)`, the last ones
/// shorter or empty), each of which writes its partial and signals `done`; a [`Total`]
/// submitted after it and waiting until `done` has counted them all joins the stages.
/// Result: the number of parts.
///
/// Once the split runs, `done` counts every part, pushed or not: a part that could not
/// be pushed (the spawn ring stayed full) is signalled here before the error is
/// returned, and a part that fails signals too, so that the waiting tasks do not wait
/// for a signal that will not come (they run, and the ticket reports the failure). A
/// split that never runs (its own dependency failed, or an abort) signals nothing: then
/// cancel the ticket or drop the counter, which ends the waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct SumSplit {
    pub x: Slice<f32>,
    pub partials: Slice<f32>,
    pub done: CounterId,
}

impl SumSplit {
    /// The elements of `x` each part sums (`None`: no part, or more than
    /// [`crate::MAX_CHILDREN`]).
    fn chunk(&self) -> Option<u32> {
        let parts = self.partials.len;
        (1..=crate::MAX_CHILDREN).contains(&parts).then(|| self.x.len.div_ceil(parts))
    }
}

impl DeviceTask for SumSplit {
    const ID: TaskId = TaskId(0x205);

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.read(self.x);
        d.write(self.partials);
        d.counter(self.done);
        d.spawns(SumPart::ID);
        if self.chunk().is_none() { Err(ArgError::Bad("partials must hold 1 to MAX_CHILDREN (256) parts")) } else { Ok(()) }
    }

    // Out of line: the push loop stays out of the persistent loop's registers.
    #[inline(never)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let chunk = self.chunk().ok_or(Status::BadArgs)?;
        for index in 0..self.partials.len {
            let start = (index * chunk).min(self.x.len);
            let pushed = match self.x.sub(start, chunk.min(self.x.len - start)) {
                Some(x) => cx.spawn(&SumPart { x, partials: self.partials, index, done: self.done }),
                None => Err(Status::OutOfRange),
            };
            if let Err(e) = pushed {
                // The parts not pushed, counted all the same (see above).
                for _ in index..self.partials.len {
                    cx.signal(self.done)?;
                }
                return Err(e);
            }
        }
        Ok(self.partials.len as u64)
    }
}

/// A part of a [`SumSplit`]: [`SumSquares`]'s work, then a signal of `done` from its
/// own body (`TaskCx::signal`), since a pushed task's record carries no counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct SumPart {
    pub x: Slice<f32>,
    pub partials: Slice<f32>,
    pub index: u32,
    pub done: CounterId,
}

impl SumPart {
    /// The part's work, as a [`SumSquares`].
    fn work(&self) -> SumSquares {
        SumSquares { x: self.x, partials: self.partials, index: self.index }
    }
}

impl DeviceTask for SumPart {
    const ID: TaskId = TaskId(0x206);

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.counter(self.done);
        self.work().declare(d)
    }

    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let out = self.work().run(cx);
        // Signalled whatever the outcome (see `SumSplit`), by every lane: a failure may
        // be lane 0's alone (its write of the partial).
        cx.signal(self.done)?;
        out
    }
}
