//! The streaming rival: what a CUDA programmer writes to feed a GPU batches of tasks
//! from host threads without a resident kernel. Each producer thread has its own
//! stream and a ring of pinned staging slots with a device table behind each; per
//! batch it writes the records into the next slot (after waiting on the event recorded
//! behind that slot's last use), issues one async copy of the slot into its device
//! table and one launch of `resident_table` over it (a warp per task, the set's
//! dispatch as its switch), and records the slot's event. At the end, one synchronize
//! per stream. CUDA only; run it with the persistent kernel stopped (`Runtime::close`).
#![allow(dead_code)]

use std::ffi::c_void;
use std::time::{Duration, Instant};

use resident::stream::{DeviceBuffer, Event, Function, LaunchConfig, PinnedBuffer, Stream};
use resident::{Error, Result, Runtime, Task};
use resident_device::shared::TableParams;

/// Staging slots per producer: enough that the host never waits on a slot whose batch
/// is still queued behind the ones before it.
pub const SLOTS: usize = 4;

/// One staging slot: the records as written each time, pinned staging, the device
/// table, the launch parameters for it, and the event behind its last use.
struct Slot {
    records: Vec<Task>,
    pinned: PinnedBuffer<Task>,
    dev: DeviceBuffer<Task>,
    params: TableParams,
    done: Event,
    used: bool,
}

/// One producer thread's stream and slots.
pub struct Producer {
    stream: Stream,
    slots: Vec<Slot>,
}

/// The rival for `threads` producers of batches of `batch` tasks.
pub struct StreamingRival {
    table: Function<TableParams>,
    producers: Vec<Producer>,
    batch: usize,
}

impl StreamingRival {
    /// Producers for `threads` threads, each batch `tasks` (checked once here, as the
    /// runtime checks a submission, out of the timed runs).
    pub fn new(rt: &Runtime, threads: usize, tasks: &[Task]) -> Result<Self> {
        let gpu = rt.device()?;
        let table = rt.module()?.function::<TableParams>("resident_table")?;
        let n = tasks.len();
        let producers = (0..threads)
            .map(|_| {
                let slots = (0..SLOTS)
                    .map(|_| {
                        let dev = gpu.alloc_zeroed::<Task>(n.max(1))?;
                        let (records, params) = rt.probe().table_params(tasks, dev.device_ptr())?;
                        Ok(Slot { records, pinned: gpu.pinned::<Task>(n.max(1))?, dev, params, done: gpu.event()?, used: false })
                    })
                    .collect::<Result<_>>()?;
                Ok(Producer { stream: gpu.stream()?, slots })
            })
            .collect::<Result<_>>()?;
        Ok(Self { table, producers, batch: n })
    }

    /// Every producer feeds `batches` batches at once, each from its own thread; the
    /// time from the start until the last producer's stream has finished.
    pub fn run(&mut self, batches: usize) -> Result<Duration> {
        let (table, n) = (&self.table, self.batch);
        let start = Instant::now();
        std::thread::scope(|s| {
            let handles: Vec<_> = self.producers.iter_mut().map(|p| s.spawn(move || p.feed(table, n, batches))).collect();
            handles.into_iter().try_for_each(|h| h.join().map_err(|_| Error::Config("a producer panicked".into()))?)
        })?;
        Ok(start.elapsed())
    }
}

impl Producer {
    fn feed(&mut self, table: &Function<TableParams>, n: usize, batches: usize) -> Result<()> {
        let grid = (n as u32).div_ceil(256 / 32).max(1);
        // Binds the device's context to this thread before the driver calls below.
        self.stream.device().event()?;
        for b in 0..batches {
            let slot = &mut self.slots[b % SLOTS];
            if slot.used {
                // The slot's last copy has read the staging memory.
                slot.done.synchronize()?;
            }
            slot.pinned[..n].copy_from_slice(&slot.records);
            // SAFETY: `pinned` holds `n` records and is neither written nor dropped
            // before the event recorded behind this copy completes (waited for above
            // before the slot is written again; `Drop` of the producer comes after the
            // stream's synchronize below); `dev` holds `n` records.
            let rc = unsafe {
                cudarc::driver::sys::cuMemcpyHtoDAsync_v2(
                    slot.dev.device_ptr(),
                    slot.pinned.as_ptr() as *const c_void,
                    n * size_of::<Task>(),
                    self.stream.raw(),
                )
            };
            if rc != cudarc::driver::sys::CUresult::CUDA_SUCCESS {
                return Err(Error::Config(format!("cuMemcpyHtoDAsync: {rc:?}")));
            }
            // SAFETY: the records were checked against the runtime's live buffers
            // (noops name none) and lie in `dev`, which outlives the stream's work.
            unsafe { self.stream.launch(table, LaunchConfig::new(grid, 256), slot.params) }?;
            self.stream.record(&slot.done)?;
            slot.used = true;
        }
        self.stream.synchronize()
    }
}
