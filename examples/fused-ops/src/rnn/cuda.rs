//! The RNN on a CUDA device, on resident's public stream API: the persistent kernel
//! (`rnn_persistent`, a cooperative launch so that every block is co-resident, each
//! block's rows of the weights in dynamic shared memory), its feeder (`rnn_feed`, one
//! block on a stream of its own, launched first), and the per-step baseline
//! (`rnn_step`), plain and captured into a CUDA Graph. The kernels are the device
//! crate's (`fused_ops_device::rnn`), from the example's kernel image.

use fused_ops_device::rnn::{RnnParams, RnnSync, SmemLayout, rnn_status};
use resident::stream::{Device, DeviceBuffer, Function, Graph, LaunchConfig, PinnedBuffer, Stream};
use resident::{Error, Result};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::{Feed, RnnRun, RnnShape, RnnWeights};

/// Threads per block of the RNN kernels (eight warps: a warp per row at a time).
const BLOCK: u32 = 256;
/// Threads of the feeder's one block.
const FEED_BLOCK: u32 = 256;
/// Bound on every device-side wait.
const TIMEOUT_MS: u32 = 10_000;
/// Beyond the device's own bound, how long the host waits before it aborts.
const HOST_GRACE: Duration = Duration::from_secs(5);

/// Index of a `RnnSync` field among its `u32` words.
fn word(offset: usize) -> usize {
    offset / size_of::<u32>()
}

pub(crate) struct CudaRnn {
    // Field order is drop order: the graph and the streams (which wait for their work)
    // before the memory their kernels use.
    graph: Option<Graph>,
    compute: Stream,
    feeder: Stream,
    rnn: Function<RnnParams>,
    feed: Function<RnnParams>,
    step: Function<RnnParams>,
    /// `W_hh`, `W_ih`, `b`: owned here, named by `params`.
    _weights: [DeviceBuffer<f32>; 3],
    h0: DeviceBuffer<f32>,
    x: DeviceBuffer<f32>,
    out: DeviceBuffer<f32>,
    /// The `RnnSync` words.
    sync: DeviceBuffer<u32>,
    host_x: PinnedBuffer<f32>,
    host_ready: PinnedBuffer<u32>,
    params: RnnParams,
    shape: RnnShape,
    blocks: u32,
    smem: u32,
    step_smem: u32,
    sms: u32,
    /// Multiplies every time bound (`set_time_scale`).
    time_scale: u32,
}

impl CudaRnn {
    pub fn new(shape: RnnShape, w: &RnnWeights) -> Result<Self> {
        let gpu = Device::first()?;
        let module = gpu.load(&crate::kernel_image())?;
        let (rnn, feed, step) = (module.function("rnn_persistent")?, module.function("rnn_feed")?, module.function("rnn_step")?);
        let sms = gpu.sm_count();
        // One block per SM, rows split evenly: the weights are spread over every SM's
        // shared memory.
        let rows = shape.hidden.div_ceil(sms).max(1);
        let blocks = shape.hidden.div_ceil(rows);
        let (h, i, b, t) = (shape.hidden as usize, shape.input as usize, shape.batch as usize, shape.steps as usize);
        let weights = [gpu.alloc_from(&w.w_hh)?, gpu.alloc_from(&w.w_ih)?, gpu.alloc_from(&w.bias)?];
        let (h0, x, out) = (gpu.alloc_zeroed::<f32>(b * h)?, gpu.alloc_zeroed::<f32>(t * b * i)?, gpu.alloc_zeroed::<f32>(t * b * h)?);
        let sync = gpu.alloc_zeroed::<u32>(size_of::<RnnSync>() / size_of::<u32>())?;
        let (host_x, host_ready) = (gpu.pinned::<f32>(t * b * i)?, gpu.pinned::<u32>(32)?);
        let params = RnnParams {
            w_hh: weights[0].device_ptr(),
            w_ih: weights[1].device_ptr(),
            bias: weights[2].device_ptr(),
            h0: h0.device_ptr(),
            x: x.device_ptr(),
            out: out.device_ptr(),
            sync: sync.device_ptr(),
            host_x: host_x.device_ptr(),
            host_ready: host_ready.device_ptr(),
            hidden: shape.hidden,
            input: shape.input,
            batch: shape.batch,
            steps: shape.steps,
            rows_per_block: rows,
            step: 0,
            timeout_ms: TIMEOUT_MS,
            _pad: 0,
        };
        let (smem, step_smem) = (SmemLayout::new(&params, true).bytes() as u32, SmemLayout::new(&params, false).bytes() as u32);
        let per_sm = rnn.blocks_per_sm(BLOCK, smem)?;
        if per_sm * sms < blocks {
            return Err(Error::Config(format!(
                "the persistent RNN needs {blocks} co-resident blocks of {smem} bytes of shared memory; {per_sm} per SM fit on {sms} SMs"
            )));
        }
        Ok(Self {
            graph: None,
            compute: gpu.stream()?,
            feeder: gpu.stream()?,
            rnn,
            feed,
            step,
            _weights: weights,
            h0,
            x,
            out,
            sync,
            host_x,
            host_ready,
            params,
            shape,
            blocks,
            smem,
            step_smem,
            sms,
            time_scale: 1,
        })
    }

    pub fn describe(&self) -> String {
        format!(
            "CUDA: {} blocks (of {} SMs) x {} threads, {} rows each, {:.1} KiB of weights and state in shared memory per block",
            self.blocks,
            self.sms,
            BLOCK,
            self.params.rows_per_block,
            self.smem as f64 / 1024.0
        )
    }

    /// Initial state in, outputs poisoned with NaN (an unwritten output shows).
    fn prepare(&self, h0: &[f32]) -> Result<()> {
        self.h0.copy_from_slice(h0)?;
        self.out.copy_from_slice(&vec![f32::NAN; self.shape.out_len()])
    }

    /// The host's count of ready steps, in mapped pinned memory the feeder polls.
    fn host_ready(&mut self) -> &AtomicU32 {
        // SAFETY: a 4-aligned `u32` of pinned memory that lives as long as `self`, and
        // `&mut self` means no Rust reference to it is alive; the device reads it
        // through its mapped address (`ld.acquire.sys`), which Rust does not see.
        unsafe { AtomicU32::from_ptr(self.host_ready.as_mut_ptr()) }
    }

    fn sync_word(&self, offset: usize) -> Result<u32> {
        let i = word(offset);
        let mut v = [0u32];
        self.sync.slice(i..i + 1).read_into(&mut v)?;
        Ok(v[0])
    }

    /// Asks the RNN's kernels to leave (they poll `abort`, `ld.acquire.sys`): a copy on
    /// the device handle's own stream, which does not wait for the kernels.
    fn abort(&self) -> Result<()> {
        let i = word(std::mem::offset_of!(RnnSync, abort));
        self.sync.slice(i..i + 1).write_from(&[1])
    }

    /// Waits for `stream` until the device's own bound (per wait) plus a grace period
    /// and 100 µs per step; then aborts (the kernels poll `abort`) and reports a timeout.
    fn wait(&self, stream: &Stream) -> Result<()> {
        let bound = Duration::from_millis(TIMEOUT_MS as u64) + HOST_GRACE + Duration::from_micros(100 * self.shape.steps as u64);
        let deadline = Instant::now() + bound * self.time_scale;
        loop {
            if stream.is_idle()? {
                return Ok(());
            }
            if Instant::now() >= deadline {
                self.abort()?;
                let _ = stream.synchronize();
                return Err(Error::Timeout);
            }
            std::thread::yield_now();
        }
    }

    /// Multiplies the device's bound on each wait and the host's bound on a run by `k`
    /// (at least 1): for runs under compute-sanitizer, which slows kernels many times.
    pub fn set_time_scale(&mut self, k: u32) {
        self.time_scale = k.max(1);
        self.params.timeout_ms = TIMEOUT_MS.saturating_mul(self.time_scale);
    }

    pub fn persistent(&mut self, h0: &[f32], xs: &[f32], feed: Feed) -> Result<RnnRun> {
        self.prepare(h0)?;
        let s = self.shape;
        self.sync.copy_from_slice(&vec![0; self.sync.len()])?;
        let per_step = (s.batch * s.input) as usize;
        match feed {
            Feed::Device => {
                self.x.copy_from_slice(xs)?;
                let i = word(std::mem::offset_of!(RnnSync, x_ready));
                self.sync.slice(i..i + 1).write_from(&[s.steps])?;
            }
            Feed::HostAhead => {
                self.host_x.copy_from_slice(xs);
                // Release: the inputs before the feeder's ld.acquire.sys of the count.
                self.host_ready().store(s.steps, Ordering::Release);
            }
            Feed::HostLive => self.host_ready().store(0, Ordering::Release),
        }
        let p = self.params;
        let start = Instant::now();
        if feed != Feed::Device {
            // Launched first, so that it is resident before the RNN's blocks take the SMs.
            // SAFETY: every address in `p` is a buffer of `self`, which outlives the
            // kernels (`wait` below, and the streams synchronize when dropped first).
            unsafe { self.feeder.launch(&self.feed, LaunchConfig::new(1, FEED_BLOCK).shared_bytes(16), p) }?;
        }
        let cfg = LaunchConfig::new(self.blocks, BLOCK).shared_bytes(self.smem).cooperative();
        // SAFETY: as for the feeder.
        if let Err(e) = unsafe { self.compute.launch(&self.rnn, cfg, p) } {
            // The feeder would wait for inputs nobody uses: tell it to leave.
            self.abort()?;
            let _ = self.feeder.synchronize();
            return Err(e);
        }
        if feed == Feed::HostLive {
            let base = self.host_x.as_mut_ptr();
            for t in 0..s.steps as usize {
                // SAFETY: step t's slot of host_x (in bounds: steps × batch × input
                // floats); the feeder reads it only after the release store below, and
                // no Rust reference to the buffer is alive meanwhile.
                unsafe { std::ptr::copy_nonoverlapping(xs[t * per_step..].as_ptr(), base.add(t * per_step), per_step) };
                // Release: the step's inputs before the feeder's ld.acquire.sys of the
                // count (x86 stores are ordered; PCIe reads snoop the cache).
                self.host_ready().store(t as u32 + 1, Ordering::Release);
            }
        }
        let waited = self.wait(&self.compute);
        let elapsed = start.elapsed();
        if feed != Feed::Device {
            self.wait(&self.feeder)?;
        }
        waited?;
        match self.sync_word(std::mem::offset_of!(RnnSync, status))? {
            rnn_status::OK => Ok(RnnRun { out: self.out.to_vec()?, elapsed }),
            code => Err(Error::DeviceFault(format!("persistent RNN: {}", rnn_status::name(code)))),
        }
    }

    fn launch_steps(&self, stream: &Stream) -> Result<()> {
        for t in 0..self.shape.steps {
            let p = RnnParams { step: t, ..self.params };
            // SAFETY: as for the persistent kernel; each step's launch follows the
            // previous one in stream order.
            unsafe { stream.launch(&self.step, LaunchConfig::new(self.blocks, BLOCK).shared_bytes(self.step_smem), p) }?;
        }
        Ok(())
    }

    pub fn per_step(&mut self, h0: &[f32], xs: &[f32]) -> Result<RnnRun> {
        self.prepare(h0)?;
        self.x.copy_from_slice(xs)?;
        let start = Instant::now();
        self.launch_steps(&self.compute)?;
        self.compute.synchronize()?;
        Ok(RnnRun { elapsed: start.elapsed(), out: self.out.to_vec()? })
    }

    pub fn per_step_graph(&mut self, h0: &[f32], xs: &[f32]) -> Result<RnnRun> {
        self.prepare(h0)?;
        self.x.copy_from_slice(xs)?;
        if self.graph.is_none() {
            self.graph = Some(self.compute.capture(|s| self.launch_steps(s))?);
        }
        let start = Instant::now();
        self.graph.as_ref().expect("captured above").launch(&self.compute)?;
        self.compute.synchronize()?;
        Ok(RnnRun { elapsed: start.elapsed(), out: self.out.to_vec()? })
    }
}
