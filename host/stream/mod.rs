//! The CUDA stream model as a safe API: [`Stream`]s with priorities, [`Event`]s,
//! waits between streams, host callbacks, [`PinnedBuffer`]s, [`DeviceBuffer`]s, async
//! copies, and [`Gpu::scope`], in which pinned host memory is lent to streams.
//!
//! Independent of the persistent [`crate::Runtime`]: ordinary kernels, launched one by
//! one. Built on `crate::cuda` (cudarc's raw `sys` layer, loaded at run time).
//!
//! 1. Open the device, make streams (non-blocking; priorities from the device's range).
//!    ```no_run
//!    # fn main() -> resident::Result<()> {
//!    use resident::stream::Gpu;
//!    let gpu = Gpu::first()?;
//!    let p = gpu.priorities();                // e.g. least 0, greatest -5
//!    let urgent = gpu.stream_with_priority(p.high())?;
//!    let background = gpu.stream()?;
//!    # Ok(()) }
//!    ```
//! 2. Device buffers are usable from any stream: the API orders a use after the
//!    conflicting uses of other streams by itself (events and waits, no host wait).
//!    ```no_run
//!    # fn main() -> resident::Result<()> {
//!    # let gpu = resident::stream::Gpu::first()?;
//!    # let (a, b) = (gpu.stream()?, gpu.stream()?);
//!    let x = gpu.alloc_from(&vec![1.0f32; 1 << 20])?;
//!    let y = gpu.alloc_zeroed::<f32>(1 << 20)?;
//!    a.pipeline(x.view(), x.view(), 100)?;    // writes x on stream a
//!    b.copy_d2d(&x, &y)?;                     // b waits for a's write first
//!    assert!(y.to_vec()?.iter().all(|&v| v < 1.0));
//!    # Ok(()) }
//!    ```
//! 3. Copies to and from pinned host memory happen in a scope, which keeps the host
//!    buffers borrowed until its streams are synchronized.
//!    ```no_run
//!    # fn main() -> resident::Result<()> {
//!    # let gpu = resident::stream::Gpu::first()?;
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
//!    ```no_run
//!    # fn main() -> resident::Result<()> {
//!    # let gpu = resident::stream::Gpu::first()?;
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
//!
//! docs/streams.md explains the borrow rules and why they are sound. Pinned memory is
//! freed with `cuMemFreeHost`, which synchronizes the context: it hangs while a
//! persistent `Runtime` kernel is resident on the same device.

mod callback;
mod copy;
mod device;
mod device_buffer;
mod event;
mod kernels;
mod launch;
mod pinned;
mod scoped;
#[allow(clippy::module_inception)]
mod stream;
mod ticket_wait;
mod tracker;

pub use device::Gpu;
pub use device_buffer::{DeviceBuffer, DeviceView};
pub use event::Event;
pub use launch::{Function, Graph, LaunchConfig, Module};
pub use pinned::{PinnedBuffer, PinnedView, PinnedViewMut};
pub use scoped::{Scope, ScopedStream};
pub use stream::{Priorities, Stream};
