//! Kernel entry points of `resident`, compiled to PTX. Each is a thin shell around code
//! in `resident-device`, so that the CPU backend runs the same bodies.
#![no_std]
#![feature(abi_ptx)]

use resident_shared::{KernelParams, OneTaskParams};

/// The persistent kernel: every warp of every block runs the persistent loop until the
/// terminate sentinel or an abort. Launched once per runtime, with a grid that the
/// occupancy query says is co-resident.
///
/// # Safety
/// `p` must describe a live queue; see `resident_device::queue`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_persistent(p: KernelParams) {
    unsafe { resident_device::entry::persistent::<resident_device::Builtins>(&p) }
}

/// The relay: one warp (launch one block of 32 threads, on a stream of its own, beside
/// the persistent kernel) that moves small host batches into the ring. A kernel of its
/// own, so that its code does not raise the persistent loop's register count.
///
/// # Safety
/// `p` must describe a live queue with a mapped `relay` mailbox; see
/// `resident_device::relay`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_relay(p: KernelParams) {
    unsafe { resident_device::entry::relay::<resident_device::Builtins>(&p) }
}

/// The baseline: one launch runs one task on one warp.
///
/// # Safety
/// `p` must name a valid buffer table and completion record.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_one_task(p: OneTaskParams) {
    unsafe { resident_device::entry::one_task::<resident_device::Builtins>(&p) }
}

/// Bounds checks and `unwrap`s end here: no formatting machinery on the device.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    resident_device::arch::trap()
}

/// An elementwise map with a tunable cost per element (stream API, overlap example).
/// Any grid; each thread strides over the array.
///
/// # Safety
/// `p` must name `len` valid `f32`s of input and of output; see
/// `resident_device::kernels::pipeline::run`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_pipeline(p: resident_device::kernels::pipeline::PipelineParams) {
    use resident_device::arch;
    let first = arch::block_idx() as u64 * arch::block_dim() as u64 + arch::thread_idx() as u64;
    let stride = arch::grid_dim() as u64 * arch::block_dim() as u64;
    unsafe { resident_device::kernels::pipeline::run(&p, first, stride) }
}

/// The axpy task's vector loop over many slices, one warp each, in one launch: the
/// dispatch benchmark's zero-dispatch ceiling.
///
/// # Safety
/// See `resident_device::kernels::axpy_flat::run`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_axpy_flat(p: resident_device::kernels::axpy_flat::AxpyFlatParams) {
    unsafe { resident_device::kernels::axpy_flat::run(&p, resident_device::arch::global_warp_id()) }
}

/// Waits until a ticket's batch has completed in the persistent kernel (launch with one
/// thread, on the stream that must follow the tasks).
///
/// # Safety
/// `p` must name the live runtime's memory; see `resident_device::kernels::wait_ticket`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_wait_ticket(p: resident_device::kernels::wait_ticket::WaitTicketParams) {
    unsafe { resident_device::kernels::wait_ticket::run(&p) };
}

/// Thread 0 waits `nanos`, then writes `value` (stream API ordering tests). Launch
/// with one thread.
///
/// # Safety
/// `p.target` must be a valid `u32`; see `resident_device::kernels::spin_write::run`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_spin_write(p: resident_device::kernels::spin_write::SpinWriteParams) {
    if resident_device::arch::block_idx() == 0 && resident_device::arch::thread_idx() == 0 {
        unsafe { resident_device::kernels::spin_write::run(&p) };
    }
}

// --- Fused-op examples (issue 4): resident_device::nn ---

/// The `Nn` flavor of the persistent kernel: the same loop, dispatching to the standard
/// tasks plus the examples' (conv tile, batch-norm normalize, record pipeline). A kernel
/// of its own so that the standard kernel keeps its register budget.
///
/// # Safety
/// As for `resident_persistent`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_persistent_nn(p: KernelParams) {
    unsafe { resident_device::entry::persistent::<resident_device::nn::NnTasks>(&p) }
}

/// Unfused conv + batch norm, stage 1 of 3 (conv tiles, no statistics). Any grid.
///
/// # Safety
/// `p` must name the geometry's buffers; see `resident_device::nn::stages`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_conv_stage(p: resident_device::nn::stages::ConvBnStageParams) {
    use resident_device::arch;
    unsafe { resident_device::nn::stages::conv(&p, arch::global_warp_id(), arch::global_warp_count()) }
}

/// Unfused conv + batch norm, stage 2 of 3 (per-tile statistics of `y`). Any grid.
///
/// # Safety
/// As for `resident_conv_stage`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_bn_stats_stage(p: resident_device::nn::stages::ConvBnStageParams) {
    use resident_device::arch;
    unsafe { resident_device::nn::stages::stats(&p, arch::global_warp_id(), arch::global_warp_count()) }
}

/// Unfused conv + batch norm, stage 3 of 3 (normalize, scale, shift, ReLU). Any grid.
///
/// # Safety
/// As for `resident_conv_stage`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_bn_norm_stage(p: resident_device::nn::stages::ConvBnStageParams) {
    use resident_device::arch;
    unsafe { resident_device::nn::stages::normalize(&p, arch::global_warp_id(), arch::global_warp_count()) }
}

/// The persistent RNN: every step of the sequence in one launch. Launch cooperatively
/// (all blocks co-resident) with `SmemLayout::new(p, true).bytes()` of dynamic shared
/// memory and a multiple of 32 threads per block.
///
/// # Safety
/// `p` must describe live buffers; see `resident_device::nn::rnn`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_rnn(p: resident_device::nn::rnn::RnnParams) {
    use resident_device::arch;
    let smem = arch::dyn_smem() as *mut f32;
    unsafe {
        resident_device::nn::rnn::persistent_block(&p, smem, arch::block_idx(), arch::grid_dim(), arch::thread_idx(), arch::block_dim())
    }
}

/// The RNN's input feeder: launch one block, on a stream of its own, before
/// `resident_rnn`, with 16 bytes of dynamic shared memory.
///
/// # Safety
/// As for `resident_rnn`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_rnn_feed(p: resident_device::nn::rnn::RnnParams) {
    use resident_device::arch;
    if arch::block_idx() == 0 {
        unsafe { resident_device::nn::rnn::feed(&p, arch::dyn_smem() as *mut f32, arch::thread_idx(), arch::block_dim()) }
    }
}

/// The RNN baseline: one launch computes step `p.step`, reading the weights from global
/// memory. Launch with `SmemLayout::new(p, false).bytes()` of dynamic shared memory.
///
/// # Safety
/// As for `resident_rnn`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_rnn_step(p: resident_device::nn::rnn::RnnParams) {
    use resident_device::arch;
    let smem = arch::dyn_smem() as *mut f32;
    unsafe { resident_device::nn::rnn::step_block(&p, smem, arch::block_idx(), arch::thread_idx(), arch::block_dim()) }
}
