//! The fused-op examples' device code (issue 4): tasks for the `Nn` kernel flavor
//! (`resident_persistent_nn`), and the kernels of the examples' baselines and of the
//! persistent RNN.
//!
//! Owns: the conv tile ([`conv`]), batch-norm statistics and normalize ([`bn`]), the
//! record pipeline's stages ([`records`]), the persistent RNN, its feeder and its
//! per-step baseline ([`rnn`]), the unfused conv + BN stage kernels ([`stages`]), and
//! the arithmetic they share ([`math`]). [`NnTasks`] dispatches opcodes 16..=31 and
//! hands every other opcode to the standard set.
//! Does not own: the queue, completion or dependency protocol (the persistent loop runs
//! these tasks like any other), nor the argument layouts (`resident_shared::nn`).

pub mod bn;
pub mod conv;
pub mod math;
pub mod records;
pub mod rnn;
pub mod stages;

use resident_shared::nn::{ConvGeom, whole};
use resident_shared::{Opcode, Status, Task};

use crate::buffers;
use crate::tasks::{self, Outcome, TaskContext, TaskSet};

/// The standard tasks plus the examples': the task set of `resident_persistent_nn`
/// and of the CPU backend's workers when the runtime is configured with the `Nn`
/// flavor.
pub struct NnTasks;

impl TaskSet for NnTasks {
    #[inline(always)]
    unsafe fn execute(task: &Task, cx: &TaskContext, seq: u32) -> Outcome {
        // One call site for every example task: the loop's own code stays that of the
        // standard kernel, and the examples' registers are their callee's business.
        if (16..=31).contains(&task.opcode) { unsafe { run_nn(task, cx) } } else { unsafe { tasks::execute(task, cx, seq) } }
    }
}

/// Dispatches the example tasks (opcodes 16..=31).
///
/// # Safety
/// See [`crate::tasks::execute`].
#[inline(always)]
unsafe fn run_nn(task: &Task, cx: &TaskContext) -> Outcome {
    match Opcode::from_u16(task.opcode) {
        Some(Opcode::ConvTile) => unsafe { run_conv(task, cx) }.into(),
        Some(Opcode::BnNormalize) => unsafe { run_normalize(task, cx) }.into(),
        Some(Opcode::RecordParse) => unsafe { records::run_parse(task, cx) }.into(),
        Some(Opcode::RecordTransform) => unsafe { records::run_transform(task, cx) }.into(),
        Some(Opcode::RecordReduce) => unsafe { records::run_reduce(task, cx) }.into(),
        _ => Outcome::err(Status::InvalidOpcode),
    }
}

/// `Task::conv_tile`: resolves and checks the buffers, then runs the tile.
///
/// # Safety
/// See [`crate::tasks::execute`].
#[inline(always)]
unsafe fn run_conv(task: &Task, cx: &TaskContext) -> Result<u64, Status> {
    let g = ConvGeom::from_task(task).ok_or(Status::BadArgs)?;
    let tile = task.args[7];
    if tile >= g.tiles() {
        return Err(Status::BadArgs);
    }
    let x = unsafe { buffers::resolve::<f32>(cx.buffers, whole(task.args[0], g.x_len())) }?;
    let w = unsafe { buffers::resolve::<f32>(cx.buffers, whole(task.args[1], g.w_len())) }?;
    let y = unsafe { buffers::resolve::<f32>(cx.buffers, whole(task.args[2], g.y_len())) }?;
    let partials = unsafe { buffers::resolve::<f32>(cx.buffers, whole(task.args[3], g.partials_len())) }?;
    if !(w as usize).is_multiple_of(16) {
        return Err(Status::BadArgs);
    }
    unsafe { conv::conv_tile(&g, x, w, y, partials, tile) };
    Ok(tile as u64)
}

/// `Task::bn_normalize`: resolves and checks the buffers, then normalizes.
///
/// # Safety
/// See [`crate::tasks::execute`].
#[inline(never)]
unsafe fn run_normalize(task: &Task, cx: &TaskContext) -> Result<u64, Status> {
    let g = ConvGeom::from_task(task).ok_or(Status::BadArgs)?;
    let (c, n0, count, eps) = (task.args[7], task.args[8], task.args[9], f32::from_bits(task.args[10]));
    if c >= g.c_out || n0 as u64 + count as u64 > g.n as u64 || eps.is_nan() || eps < 0.0 {
        return Err(Status::BadArgs);
    }
    let y = unsafe { buffers::resolve::<f32>(cx.buffers, whole(task.args[0], g.y_len())) }?;
    let out = unsafe { buffers::resolve::<f32>(cx.buffers, whole(task.args[1], g.y_len())) }?;
    let partials = unsafe { buffers::resolve::<f32>(cx.buffers, whole(task.args[2], g.partials_len())) }?;
    let affine = unsafe { buffers::resolve::<f32>(cx.buffers, whole(task.args[3], g.affine_len())) }?;
    unsafe { bn::normalize(&g, y, out, partials, affine, c, n0, count, eps) };
    Ok(count as u64)
}
