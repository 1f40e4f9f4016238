//! [`DeviceKernel`]: an ordinary kernel (launched once per piece of work, like any CUDA
//! kernel) written in a device crate. The build helper (`resident-build`, its `kernel`
//! method) gives each one an entry point in the kernel image, named as you ask; the host
//! launches it with the typed launch API (`resident::stream`), on the GPU or, on the
//! CPU backend, on host threads.

/// An ordinary kernel: one `Pod` parameter struct, passed by value, and the body every
/// thread of the grid runs. Read the thread's place with [`crate::arch`]
/// (`block_idx`, `thread_idx`, `block_dim`, `grid_dim`, ...). On the CPU backend a
/// block is one thread (`block_dim() == 1`, a warp of one lane), so write bodies that
/// stride over their work by the grid's size rather than assume a block shape.
pub trait DeviceKernel: 'static {
    /// The one parameter struct, passed by value (what the host's typed launch passes).
    type Params: bytemuck::Pod;

    /// The body, run by every thread of the launch.
    ///
    /// # Safety
    /// The parameters' addresses must be valid for what the kernel does with them: the
    /// launch is as unchecked as any CUDA kernel's (the host's launch is `unsafe`).
    unsafe fn run(p: &Self::Params);
}
