//! The host-side checks of the example tasks (opcodes 16..=31), before submission; the
//! device checks the same again (`resident_device::nn`). A task names each buffer by
//! handle, used from element 0 with the length its geometry implies.

use resident_shared::nn::{ConvGeom, MAX_RECORDS_PER_TASK, RECORD_WORDS, is_nn, record_counts, whole};
use resident_shared::{ElemType, Opcode, Task};

use crate::buffer::BufferRegistry;
use crate::error::Rejection;
use crate::{Error, KernelFlavor, Result};

/// Argument `arg` names a live buffer of `elem` with at least `len` elements.
fn buffer(reg: &BufferRegistry, arg: usize, handle: u32, len: u32, elem: ElemType) -> Result<(), Rejection> {
    let s = whole(handle, len);
    match reg.entry(s.handle) {
        Some(e) if e.names(s, elem) && e.contains(s) => Ok(()),
        Some(e) if e.names(s, elem) => Err(Rejection::OutOfRange { arg, offset: 0, len }),
        _ => Err(Rejection::BadBuffer { arg, handle }),
    }
}

/// Checks one example task (called by `crate::validate::check`).
pub(crate) fn check(op: Opcode, t: &Task, reg: &BufferRegistry) -> Result<(), Rejection> {
    let a = &t.args;
    match op {
        Opcode::ConvTile | Opcode::BnNormalize => {
            let g = ConvGeom::from_task(t).ok_or(Rejection::BadArgs(
                "conv shape: sizes nonzero, c_out a multiple of 8, sides below 2^16, buffers below 2^32 elements",
            ))?;
            let f = ElemType::F32;
            if op == Opcode::ConvTile {
                if a[7] >= g.tiles() {
                    return Err(Rejection::IndexOutOfRange { index: a[7], len: g.tiles() });
                }
                buffer(reg, 0, a[0], g.x_len(), f)?;
                buffer(reg, 1, a[1], g.w_len(), f)?;
                buffer(reg, 2, a[2], g.y_len(), f)?;
                buffer(reg, 3, a[3], g.partials_len(), f)
            } else {
                let eps = f32::from_bits(a[10]);
                if a[7] >= g.c_out || a[8] as u64 + a[9] as u64 > g.n as u64 || !(eps >= 0.0 && eps.is_finite()) {
                    return Err(Rejection::BadArgs("normalize: channel below c_out, images within the batch, eps finite and >= 0"));
                }
                buffer(reg, 0, a[0], g.y_len(), f)?;
                buffer(reg, 1, a[1], g.y_len(), f)?;
                buffer(reg, 2, a[2], g.partials_len(), f)?;
                buffer(reg, 3, a[3], g.affine_len(), f)
            }
        }
        _ => {
            let (first, count, keys) = (a[4], a[5], a[6]);
            let end = first as u64 + count as u64;
            if count > MAX_RECORDS_PER_TASK || keys == 0 || keys > u32::MAX / 2 || end * RECORD_WORDS as u64 > u32::MAX as u64 {
                return Err(Rejection::BadArgs("records: at most 65536 per task, keys in 1..2^31, buffers below 2^32 words"));
            }
            let (end, u) = (end as u32, ElemType::U32);
            buffer(reg, 0, a[0], end * RECORD_WORDS, u)?;
            buffer(reg, 1, a[1], end * 2, u)?;
            buffer(reg, 2, a[2], record_counts::LEN as u32, u)?;
            buffer(reg, 3, a[3], keys * 2, u)
        }
    }
}

/// Example tasks run only on the `Nn` kernel flavor: refuse them, typed, elsewhere
/// (the standard kernel would fail them with `Status::InvalidOpcode`).
pub(crate) fn flavor_runs(flavor: KernelFlavor, tasks: &[Task]) -> Result<()> {
    if flavor == KernelFlavor::Nn {
        return Ok(());
    }
    match tasks.iter().position(|t| Opcode::from_u16(t.opcode).is_some_and(is_nn)) {
        Some(index) => Err(Error::InvalidTask {
            index,
            reason: Rejection::BadArgs("example tasks (opcodes 16..=31) need the Nn kernel flavor (RuntimeConfig::nn)"),
        }),
        None => Ok(()),
    }
}
