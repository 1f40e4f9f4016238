//! The host-side check of a task, against the live buffer registry, before anything of
//! its batch is submitted. The device checks again (`device/src/buffers.rs`); this
//! check is what gives the caller a typed error instead of a failed completion.

use resident_shared::{BufSlice, ElemType, Opcode, Task};

use crate::buffer::BufferRegistry;
use crate::counter::CounterRegistry;
use crate::error::{Error, Rejection};

/// Checks every task of a batch; the first bad one names its index.
pub(crate) fn validate(tasks: &[Task], reg: &BufferRegistry, counters: &CounterRegistry) -> Result<(), Error> {
    for (index, t) in tasks.iter().enumerate() {
        check(t, reg, counters).map_err(|reason| Error::InvalidTask { index, reason })?;
    }
    Ok(())
}

pub(crate) fn check(t: &Task, reg: &BufferRegistry, counters: &CounterRegistry) -> Result<(), Rejection> {
    if t.flags != 0 || t.seg != 0 {
        return Err(Rejection::NonZeroReserved);
    }
    for c in [t.wait_counter, t.signal_counter] {
        if c != 0 && !counters.is_live(c) {
            return Err(Rejection::BadCounter(c));
        }
    }
    let slice = |arg: usize, elem: ElemType| -> Result<BufSlice, Rejection> {
        let s = t.arg_slice(arg);
        match reg.entry(s.handle) {
            Some(e) if e.names(s, elem) => {
                if e.contains(s) {
                    Ok(s)
                } else {
                    Err(Rejection::OutOfRange { arg, offset: s.offset, len: s.len })
                }
            }
            _ => Err(Rejection::BadBuffer { arg, handle: s.handle.0 }),
        }
    };
    match Opcode::from_u16(t.opcode) {
        None => Err(Rejection::UnknownOpcode(t.opcode)),
        Some(Opcode::Terminate) => Err(Rejection::ReservedOpcode(t.opcode)),
        Some(op) if op.unchecked_only() => Err(Rejection::RequiresUnchecked(t.opcode)),
        Some(Opcode::Noop | Opcode::Spin) => Ok(()),
        Some(Opcode::Axpy) => {
            let (x, y) = (slice(1, ElemType::F32)?, slice(4, ElemType::F32)?);
            if x.len != y.len { Err(Rejection::LengthMismatch(x.len, y.len)) } else { Ok(()) }
        }
        Some(Opcode::Mark) => {
            let c = slice(0, ElemType::U32)?;
            let index = t.args[3];
            if index >= c.len { Err(Rejection::IndexOutOfRange { index, len: c.len }) } else { Ok(()) }
        }
        // Example tasks (issue 4): `crate::nn::validate`.
        Some(op @ (Opcode::ConvTile | Opcode::BnNormalize | Opcode::RecordParse | Opcode::RecordTransform | Opcode::RecordReduce)) => {
            crate::nn::validate::check(op, t, reg)
        }
        Some(Opcode::Tree) => {
            let c = slice(0, ElemType::U32)?;
            let (node, depth, fanout) = (t.args[3], t.args[4], t.args[5]);
            if depth > 0 && !(1..=resident_device::tasks::MAX_TREE_FANOUT).contains(&fanout) {
                return Err(Rejection::BadArgs("tree fanout must be 1 to 16"));
            }
            // The last node of the subtree must fit the slice.
            let mut last = node as u64;
            for _ in 0..depth {
                last = last * fanout as u64 + fanout as u64;
                if last >= c.len as u64 {
                    break;
                }
            }
            if last >= c.len as u64 {
                Err(Rejection::IndexOutOfRange { index: last.min(u32::MAX as u64) as u32, len: c.len })
            } else {
                Ok(())
            }
        }
        // Refused by the guard above; listed so that a new opcode must choose.
        Some(Opcode::FaultTrap | Opcode::FaultIllegalAddress | Opcode::AxpyRaw) => Err(Rejection::RequiresUnchecked(t.opcode)),
    }
}
