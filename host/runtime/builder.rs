//! [`RuntimeBuilder`]: which kernel image a runtime loads, on which backend, with which
//! settings.
//!
//! ```
//! use resident::{Runtime, Task};
//! let rt = Runtime::builder()
//!     .kernel(resident::KernelImage::builtin())   // or resident::kernel_image!("yours")
//!     .cpu()                                      // leave out: the GPU if there is one
//!     .config(|c| c.cpu_workers = 2)
//!     .build()?;
//! rt.submit(&[Task::noop(1)])?.wait()?;
//! # Ok::<(), resident::Error>(())
//! ```

use crate::stream::Stream;
use crate::{BackendKind, KernelImage, Result, Runtime, RuntimeConfig};

/// Builds a [`Runtime`] ([`Runtime::builder`]). Starts from [`RuntimeConfig::default`].
#[derive(Debug, Default)]
pub struct RuntimeBuilder {
    config: RuntimeConfig,
    transfer: Option<Stream>,
}

impl RuntimeBuilder {
    /// The kernel image to load: its task set is what the runtime runs and checks
    /// submissions against (the built-in tasks by default).
    pub fn kernel(mut self, image: KernelImage) -> Self {
        self.config.image = image;
        self
    }
    /// The backend (`Auto` by default: CUDA when a GPU and the image's PTX are there).
    pub fn backend(mut self, kind: BackendKind) -> Self {
        self.config.backend = kind;
        self
    }
    /// The CPU backend: worker threads running the image's set compiled for the host.
    pub fn cpu(self) -> Self {
        self.backend(BackendKind::Cpu)
    }
    /// The CUDA backend (an error if there is no GPU or the image has no PTX).
    pub fn cuda(self) -> Self {
        self.backend(BackendKind::Cuda)
    }
    /// Any other setting: `f` edits the configuration.
    pub fn config(mut self, f: impl FnOnce(&mut RuntimeConfig)) -> Self {
        f(&mut self.config);
        self
    }
    /// Starts from `config` (replacing what was set so far, the image included).
    pub fn with_config(mut self, config: RuntimeConfig) -> Self {
        self.config = config;
        self
    }
    /// The runtime's host-to-device copies (batches, `tail`, buffer allocations) go on
    /// `stream`, a stream of the caller's, with the caller's priority (CUDA only, on
    /// the stream's device: else `Error::Config` at `build`). Work the caller enqueues
    /// on it ([`Runtime::transfer_stream`]) is ordered with the runtime's copies by
    /// stream order: an input uploaded there before a `submit` has landed before the
    /// batch's tasks can run, with no host wait.
    ///
    /// ```no_run
    /// # fn main() -> resident::Result<()> {
    /// use resident::{Runtime, RuntimeConfig, stream::Device};
    /// let gpu = Device::first()?;
    /// let urgent = gpu.stream_with_priority(gpu.priorities().high())?;
    /// let rt = Runtime::builder().with_config(RuntimeConfig::cuda()).transfer_stream(urgent).build()?;
    /// assert!(rt.transfer_stream().is_some());
    /// # Ok(()) }
    /// ```
    pub fn transfer_stream(mut self, stream: Stream) -> Self {
        self.transfer = Some(stream);
        self
    }
    /// Starts the runtime: loads the image, launches its persistent kernel (or starts
    /// the CPU workers).
    pub fn build(self) -> Result<Runtime> {
        match self.transfer {
            Some(s) => Runtime::with_transfer_stream(self.config, s),
            None => Runtime::with_config(self.config),
        }
    }
}

impl Runtime {
    /// A builder: the kernel image to load (a task set of yours), the backend, settings.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }
}
