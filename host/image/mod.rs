//! [`KernelImage`]: a task set compiled twice, to PTX for the GPU (by `resident-build`,
//! in a build script) and for the host (the CPU backend's workers and the host's checks
//! of each task's declaration), with the layout the persistent kernel wants and any
//! ordinary kernels built beside it.
//!
//! ```
//! let image = resident::KernelImage::builtin();      // the runtime's own: Builtins
//! let rt = resident::Runtime::builder().kernel(image).cpu().build()?;
//! assert!(rt.kernel_image().task_ids().contains(&resident::builtin::ids::AXPY));
//! # Ok::<(), resident::Error>(())
//! ```
//!
//! A crate of yours gets its image with [`crate::kernel_image!`] from what its build
//! script made (docs/custom-tasks.md).

pub(crate) mod cpu_kernels;
pub(crate) mod task_set;
pub(crate) mod validate;

use resident_device::TaskSet;
use resident_shared::TaskId;
use std::sync::Arc;

pub use crate::image::cpu_kernels::{__CpuKernelFn, __CpuKernelRow, __cpu_kernel, __cpu_kernel_param_bytes};
use crate::image::task_set::SetInfo;

/// What `resident-build` writes for an image (the generated code's argument to
/// [`KernelImage::__from_build`]).
#[doc(hidden)]
pub struct __ImageParts {
    pub name: &'static str,
    pub ptx: &'static str,
    pub block_threads: u32,
    pub max_registers: u32,
    pub scratch_bytes_per_warp: u32,
    pub list_chunks: bool,
    pub kernels: &'static [__CpuKernelRow],
}

/// A kernel image: the PTX of one task set's persistent kernel (and ordinary kernels),
/// the same set compiled for the host, and the kernel's layout. Cheap to clone.
#[derive(Clone)]
pub struct KernelImage {
    pub(crate) name: &'static str,
    pub(crate) ptx: Arc<str>,
    pub(crate) set: SetInfo,
    pub(crate) fingerprint: u64,
    pub(crate) block_threads: u32,
    pub(crate) max_registers: u32,
    pub(crate) scratch_bytes_per_warp: u32,
    pub(crate) kernels: &'static [__CpuKernelRow],
}

impl std::fmt::Debug for KernelImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelImage")
            .field("name", &self.name)
            .field("set", &self.set)
            .field("ptx_bytes", &self.ptx.len())
            .field("block_threads", &self.block_threads)
            .field("max_registers", &self.max_registers)
            .field("scratch_bytes_per_warp", &self.scratch_bytes_per_warp)
            .field("kernels", &self.kernels.iter().map(|k| k.0).collect::<Vec<_>>())
            .finish()
    }
}

impl Default for KernelImage {
    fn default() -> Self {
        Self::builtin()
    }
}

impl KernelImage {
    /// The runtime's own image: the built-in tasks (`resident_device::Builtins`), in
    /// 256-thread blocks capped at 80 registers, with the runtime's ordinary kernels
    /// (`resident_pipeline`, `resident_spin_write`, `resident_axpy_flat`, `resident_tree_level`,
    /// `resident_tree_grow`).
    pub fn builtin() -> Self {
        include!(concat!(env!("OUT_DIR"), "/resident.rs"))
    }

    /// The image `resident-build` made (called by the code [`crate::kernel_image!`]
    /// includes).
    #[doc(hidden)]
    pub fn __from_build<S: TaskSet>(parts: __ImageParts) -> Self {
        Self {
            name: parts.name,
            ptx: Arc::from(parts.ptx),
            set: SetInfo { list_chunks: parts.list_chunks, ..SetInfo::of::<S>() },
            fingerprint: S::FINGERPRINT,
            block_threads: parts.block_threads,
            max_registers: parts.max_registers,
            scratch_bytes_per_warp: parts.scratch_bytes_per_warp,
            kernels: parts.kernels,
        }
    }

    /// The image's name (its build script's).
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// The task set's name.
    pub fn task_set(&self) -> &'static str {
        self.set.name
    }
    /// Every task id the set holds.
    pub fn task_ids(&self) -> &'static [TaskId] {
        self.set.ids
    }
    /// The PTX, empty if the build carried none (no device toolchain, or
    /// `RESIDENT_NO_PTX`): then only the CPU backend runs the image.
    pub fn ptx(&self) -> &str {
        &self.ptx
    }
    /// Whether the image carries PTX (the CUDA backend can run it).
    pub fn has_ptx(&self) -> bool {
        !self.ptx.is_empty()
    }
    /// The PTX, if the image carries any.
    pub(crate) fn built_ptx(&self) -> Option<&str> {
        self.has_ptx().then_some(&*self.ptx)
    }
    /// Threads per block the persistent kernel was built for (the runtime's
    /// `block_threads` may say otherwise).
    pub fn block_threads(&self) -> u32 {
        self.block_threads
    }
    /// The persistent kernel's register cap (0: none).
    pub fn max_registers(&self) -> u32 {
        self.max_registers
    }
    /// Bytes of scratch shared memory each warp gets.
    pub fn scratch_bytes_per_warp(&self) -> u32 {
        self.scratch_bytes_per_warp
    }
    /// The names of its ordinary kernels.
    pub fn kernels(&self) -> impl Iterator<Item = &'static str> {
        self.kernels.iter().map(|k| k.0)
    }
    /// Its ordinary kernels compiled for the host, with their parameter sizes (the
    /// stream API's CPU launches).
    pub(crate) fn cpu_kernels(&self) -> &'static [__CpuKernelRow] {
        self.kernels
    }
}

/// The kernel image `resident-build` built under `name` in this crate's build script:
/// a [`KernelImage`] expression.
///
/// ```ignore
/// let rt = resident::Runtime::builder().kernel(resident::kernel_image!("my_tasks")).build()?;
/// ```
///
/// A crate whose build script built no image (or that has none) fails to compile with a
/// message that says which step is missing; a name its build script did not build fails
/// on the missing `<name>.rs`.
#[macro_export]
macro_rules! kernel_image {
    ($name:literal) => {
        include!(concat!(
            env!(
                "RESIDENT_KERNEL_IMAGES",
                "resident::kernel_image!: this crate built no kernel image. Add `resident-build` to its [build-dependencies] and a build.rs that builds the image: `resident_build::KernelBuild::new(\"<name>\").device_crate(\"<path to your device crate>\").task_set(\"<your_device_crate::YourSet>\").build();` (docs/custom-tasks.md, step 3)"
            ),
            "/",
            $name,
            ".rs"
        ))
    };
}
