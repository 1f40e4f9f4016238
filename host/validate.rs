//! The host-side check of a task before anything of its batch is submitted: one generic
//! check for every task type, driven by the type's declaration (`DeviceTask::declare`:
//! the slices it reads and writes, its counters, the types it pushes). The device checks
//! every slice again when the task resolves it (`TaskCx::view`); this check is what
//! gives the caller a typed error instead of a failed completion.

use resident_shared::{Access, ArgError, BufferHandle, Declare, Task, TaskId};

use crate::buffer::BufferRegistry;
use crate::counter::CounterRegistry;
use crate::error::{Error, Rejection};
use crate::task_set::SetInfo;

/// What a task's declaration said, beyond its checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Declared {
    /// It may push children: its ticket must wait for its segment, not its record.
    pub spawns: bool,
    /// Only `submit_unchecked` may pass it.
    pub unchecked: bool,
}

/// Checks every task of a batch; the first bad one names its index.
pub(crate) fn validate(tasks: &[Task], set: &SetInfo, reg: &BufferRegistry, counters: &CounterRegistry) -> Result<(), Error> {
    for (index, t) in tasks.iter().enumerate() {
        check(t, set, reg, counters).map_err(|reason| Error::InvalidTask { index, reason })?;
    }
    Ok(())
}

/// One task: the runtime's header words, its counters, then its type's declaration,
/// item by item (slices are numbered in the order declared, from 0).
pub(crate) fn check(t: &Task, set: &SetInfo, reg: &BufferRegistry, counters: &CounterRegistry) -> Result<Declared, Rejection> {
    if t.flags != 0 || t.seg != 0 {
        return Err(Rejection::NonZeroReserved);
    }
    for c in [t.wait_counter, t.signal_counter] {
        if c != 0 && !counters.is_live(c) {
            return Err(Rejection::BadCounter(c));
        }
    }
    let mut first_bad = None;
    let mut slices = 0;
    let declared = declare(t, set, |a| {
        let bad = match a {
            Access::Slice { slice, elem, .. } => {
                let arg = slices;
                slices += 1;
                match reg.entry(slice.handle) {
                    Some(e) if e.names(slice, elem) && e.contains(slice) => None,
                    Some(e) if e.names(slice, elem) => Some(Rejection::OutOfRange { arg, offset: slice.offset, len: slice.len }),
                    _ => Some(Rejection::BadBuffer { arg, handle: slice.handle.0 }),
                }
            }
            Access::Counter(c) if c.0 == 0 || !counters.is_live(c.0) => Some(Rejection::BadCounter(c.0)),
            Access::Spawns(id) if !set.ids.contains(&id) => Some(Rejection::UnknownChild(id)),
            _ => None,
        };
        if first_bad.is_none() {
            first_bad = bad;
        }
    })?;
    if let Some(bad) = first_bad {
        return Err(bad);
    }
    if declared.unchecked {
        return Err(Rejection::RequiresUnchecked(t.id()));
    }
    Ok(declared)
}

/// Runs `t`'s declaration, handing each item to `item`; what it said, or why its
/// arguments are refused (its own check, an id outside the set, the sentinel).
pub(crate) fn declare(t: &Task, set: &SetInfo, mut item: impl FnMut(Access)) -> Result<Declared, Rejection> {
    if t.id() == TaskId::TERMINATE {
        return Err(Rejection::ReservedTask(t.id()));
    }
    let mut out = Declared::default();
    let mut sink = |a: Access| {
        match a {
            Access::Spawns(_) => out.spawns = true,
            Access::Unchecked => out.unchecked = true,
            _ => {}
        }
        item(a)
    };
    match (set.declare)(t, &mut Declare::new(&mut sink)) {
        None => Err(Rejection::UnknownTask(t.id())),
        Some(Err(e)) => Err(match e {
            ArgError::LengthMismatch(a, b) => Rejection::LengthMismatch(a, b),
            ArgError::IndexOutOfRange { index, len } => Rejection::IndexOutOfRange { index, len },
            ArgError::Bad(why) => Rejection::BadArgs(why),
        }),
        Some(Ok(())) => Ok(out),
    }
}

/// Every buffer the declarations of `tasks` name (sorted, without repeats): what a
/// resident list re-checks at each submission.
pub(crate) fn handles(tasks: &[Task], set: &SetInfo) -> Vec<BufferHandle> {
    let mut out = vec![];
    for t in tasks {
        let _ = declare(t, set, |a| {
            if let Access::Slice { slice, .. } = a {
                out.push(slice.handle)
            }
        });
    }
    out.sort_by_key(|h| h.0);
    out.dedup();
    out
}
