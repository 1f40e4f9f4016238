//! Kernel entry points of `resident`, compiled to PTX. Each is a thin shell around code
//! in `resident-device`, so that the CPU backend runs the same bodies.
#![no_std]
#![feature(abi_ptx)]

use resident_device::worker;
use resident_shared::{KernelParams, OneTaskParams};

/// The persistent kernel: every warp of every block runs the persistent loop until the
/// terminate sentinel or an abort. Launched once per runtime, with a grid that the
/// occupancy query says is co-resident.
///
/// # Safety
/// `p` must describe a live queue; see `resident_device::queue`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_persistent(p: KernelParams) {
    unsafe { worker::persistent_loop(&p) }
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
    unsafe { resident_device::relay::relay_loop(&p) }
}

/// The baseline: one launch runs one task on one warp.
///
/// # Safety
/// `p` must name a valid buffer table and completion record.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resident_one_task(p: OneTaskParams) {
    unsafe { worker::run_one(&p) }
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
