//! The CUDA stream model as a safe API: [`Stream`]s with priorities, [`Event`]s,
//! waits between streams, host callbacks, [`PinnedBuffer`]s, [`DeviceBuffer`]s, async
//! copies, [`Device::scope`], in which pinned host memory is lent to streams, and typed
//! launches of ordinary kernels ([`Module`], [`Function`], [`Stream::launch`],
//! [`Graph`]).
//!
//! Independent of the persistent [`crate::Runtime`]: ordinary kernels, launched one by
//! one. Two devices behind one API: a CUDA GPU (`crate::driver`: cudarc's raw `sys` layer,
//! loaded at run time) and the CPU ([`Device::cpu`]), on which a stream is a thread,
//! device memory is host memory and kernels run their host build, so that code written
//! against this API runs, and is tested, without a GPU. The walk-through below is
//! written for whichever device [`Device::auto`] finds; its doc-tests (steps 2 to 5) run
//! on [`Device::cpu`] (a hidden line), so that `cargo test --doc` never launches work on a
//! GPU of the machine that runs it.
//!
//! 1. Open the device, make streams (non-blocking; priorities from the device's range).
//!    ```no_run
//!    # fn main() -> resident::Result<()> {
//!    use resident::stream::Device;
//!    let gpu = Device::auto()?;                  // CUDA device 0, else the CPU
//!    let p = gpu.priorities();                // e.g. least 0, greatest -5
//!    let urgent = gpu.stream_with_priority(p.high())?;
//!    let background = gpu.stream()?;
//!    # Ok(()) }
//!    ```
//! 2. Device buffers are usable from any stream: the API orders a use after the
//!    conflicting uses of other streams by itself (events and waits, no host wait).
//!    ```
//!    # fn main() -> resident::Result<()> {
//!    # let gpu = resident::stream::Device::cpu(); // Device::auto()? in your code
//!    # let (a, b) = (gpu.stream()?, gpu.stream()?);
//!    let x = gpu.alloc_from(&vec![2.0f32; 1 << 20])?;
//!    let y = gpu.alloc_zeroed::<f32>(1 << 20)?;
//!    a.pipeline(x.view(), x.view(), 100)?;    // writes x on stream a (towards 1.0)
//!    b.copy_d2d(&x, &y)?;                     // b waits for a's write first
//!    assert!(y.to_vec()?.iter().all(|&v| v > 1.0 && v < 2.0));
//!    # Ok(()) }
//!    ```
//! 3. Copies to and from pinned host memory happen in a scope, which keeps the host
//!    buffers borrowed until its streams are synchronized.
//!    ```
//!    # fn main() -> resident::Result<()> {
//!    # let gpu = resident::stream::Device::cpu(); // Device::auto()? in your code
//!    let mut input = gpu.pinned_write_combined::<f32>(1 << 20)?;
//!    let mut output = gpu.pinned::<f32>(1 << 20)?;
//!    input.fill(3.0);
//!    let dev = gpu.alloc_zeroed::<f32>(1 << 20)?;
//!    gpu.scope(|s| {
//!        let st = s.stream()?;
//!        st.copy_h2d(&input, &dev)?;
//!        st.pipeline(dev.view(), dev.view(), 0)?;
//!        st.copy_d2h(&dev, &mut output)?;     // output unreadable until the scope ends
//!        Ok(())
//!    })?;
//!    assert_eq!(output[0], 3.0);
//!    # Ok(()) }
//!    ```
//! 4. Events time and order work; callbacks run Rust on the host in stream order.
//!    ```
//!    # fn main() -> resident::Result<()> {
//!    # let gpu = resident::stream::Device::cpu(); // Device::auto()? in your code
//!    # let (a, b) = (gpu.stream()?, gpu.stream()?);
//!    let (start, end) = (gpu.event()?, gpu.event()?);
//!    let flag = gpu.alloc_zeroed::<u32>(1)?;
//!    a.record(&start)?;
//!    a.spin_write(flag.view(), 1, std::time::Duration::from_millis(2))?;
//!    a.record(&end)?;
//!    b.wait_event(&end)?;                     // b's later work starts after a's spin
//!    b.on_host(|| println!("a's spin is done"))?;
//!    end.synchronize()?;
//!    assert!(end.elapsed_since(&start)? >= std::time::Duration::from_millis(2));
//!    # Ok(()) }
//!    ```
//! 5. Kernels of a kernel image launch with typed parameters, and replay from a graph.
//!    ```
//!    # fn main() -> resident::Result<()> {
//!    # let gpu = resident::stream::Device::cpu(); // Device::auto()? in your code
//!    use resident::stream::LaunchConfig;
//!    use resident_device::kernels::pipeline::PipelineParams;
//!    let x = gpu.alloc_from(&[0.5f32; 4096])?;
//!    let f = gpu.kernels().function::<PipelineParams>("resident_pipeline")?;
//!    let p = PipelineParams { input: x.device_ptr(), output: x.device_ptr(), len: 4096, iters: 1, _pad: 0 };
//!    let s = gpu.stream()?;
//!    // SAFETY: x holds 4096 floats and outlives the stream's work (synchronized below).
//!    let graph = s.capture(|s| unsafe { s.launch(&f, LaunchConfig::for_elements(4096, 256), p) })?;
//!    graph.launch(&s)?;
//!    graph.launch(&s)?;
//!    s.synchronize()?;
//!    assert_eq!(x.to_vec()?[0], (0.5 * 0.999 + 0.001) * 0.999 + 0.001);
//!    # Ok(()) }
//!    ```
//!
//! docs/streams.md explains the borrow rules and why they are sound, and the CPU
//! device's execution model. Pinned memory is freed with `cuMemFreeHost`, which waits
//! for running kernels: while a persistent `Runtime` kernel is resident, on any device,
//! the free is deferred until none is.

mod callback;
mod capture_gate;
mod caught;
mod copy;
mod cpu;
mod device;
mod device_buffer;
mod device_memory;
mod event;
mod kernels;
mod launch;
mod pinned;
mod priorities;
mod raw;
mod scoped;
#[allow(clippy::module_inception)]
mod stream;
mod ticket_wait;
mod tracker;

pub use device::Device;
pub use device_buffer::{DeviceBuffer, DeviceView};
pub use event::Event;
pub use launch::{Function, Graph, KernelInfo, LaunchConfig, Module};
pub use pinned::{PinnedBuffer, PinnedView, PinnedViewMut};
pub use priorities::Priorities;
pub(crate) use raw::RawModule;
pub use scoped::{Scope, ScopedStream};
pub use stream::Stream;
