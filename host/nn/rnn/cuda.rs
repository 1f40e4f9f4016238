//! The RNN on a CUDA device: the persistent kernel (`resident_rnn`, launched
//! cooperatively so that every block is co-resident, with each block's rows of the
//! weights in dynamic shared memory), its feeder (`resident_rnn_feed`, one block on a
//! stream of its own, launched first), and the per-step baseline (`resident_rnn_step`),
//! plain and captured into a CUDA Graph.

use cudarc::driver::sys::{self, CUdevice_attribute, CUfunction, CUfunction_attribute};
use resident_device::nn::rnn::{RnnParams, RnnSync, SmemLayout, rnn_status};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::{Feed, RnnRun, RnnShape, RnnWeights};
use crate::cuda::driver::{Context, check};
use crate::cuda::graph::CapturedGraph;
use crate::cuda::memory::{DeviceAlloc, PinnedAlloc};
use crate::cuda::module::Module;
use crate::cuda::stream::{Stream, StreamState};
use crate::{Error, Result};

/// Threads per block of the RNN kernels (eight warps: a warp per row at a time).
const BLOCK: u32 = 256;
/// Threads of the feeder's one block.
const FEED_BLOCK: u32 = 256;
/// Bound on every device-side wait.
const TIMEOUT_MS: u32 = 10_000;
/// Beyond the device's own bound, how long the host waits before it aborts.
const HOST_GRACE: Duration = Duration::from_secs(5);
/// Shared memory a block gets without opting in.
const DEFAULT_SMEM: usize = 48 * 1024;

pub(crate) struct CudaRnn {
    // Drop order: the graph, memory, then the module, the streams, the context.
    graph: Option<CapturedGraph>,
    /// `W_hh`, `W_ih`, `b`: owned here, named by `params`.
    _weights: [DeviceAlloc; 3],
    h0: DeviceAlloc,
    x: DeviceAlloc,
    out: DeviceAlloc,
    sync: DeviceAlloc,
    host_x: PinnedAlloc,
    host_ready: PinnedAlloc,
    rnn: CUfunction,
    feed: CUfunction,
    step: CUfunction,
    _module: Module,
    compute: Stream,
    feeder: Stream,
    control: Stream,
    ctx: Context,
    params: RnnParams,
    shape: RnnShape,
    blocks: u32,
    smem: usize,
    step_smem: usize,
    sms: u32,
    /// Multiplies every time bound (`set_time_scale`).
    time_scale: u32,
}

// SAFETY: function and graph handles are driver objects usable from any thread once the
// context is bound; the rest is Send.
unsafe impl Send for CudaRnn {}

fn upload(dst: u64, src: &[f32]) -> Result<()> {
    check(unsafe { sys::cuMemcpyHtoD_v2(dst, src.as_ptr() as *const c_void, std::mem::size_of_val(src)) }, "cuMemcpyHtoD")
}

impl CudaRnn {
    pub fn new(shape: RnnShape, w: &RnnWeights) -> Result<Self> {
        let ctx = Context::new(0)?;
        ctx.bind()?;
        if ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? == 0 {
            return Err(Error::Config("the persistent RNN needs cooperative launch".into()));
        }
        let module = Module::load(&ctx, &crate::KernelImage::nn())?;
        let (rnn, feed, step) =
            (module.function("resident_rnn")?, module.function("resident_rnn_feed")?, module.function("resident_rnn_step")?);
        let sms = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        // One block per SM, rows split evenly: the weights are spread over every SM's
        // shared memory.
        let rows = shape.hidden.div_ceil(sms).max(1);
        let blocks = shape.hidden.div_ceil(rows);
        let f = 4usize;
        let (h, i, b, t) = (shape.hidden as usize, shape.input as usize, shape.batch as usize, shape.steps as usize);
        let zeroed = |bytes: usize| unsafe { DeviceAlloc::zeroed_sync(&ctx, bytes) };
        let (w_hh, w_ih, bias) = (zeroed(h * h * f)?, zeroed(h * i * f)?, zeroed(h * f)?);
        let (h0, x, out, sync) = (zeroed(b * h * f)?, zeroed(t * b * i * f)?, zeroed(t * b * h * f)?, zeroed(size_of::<RnnSync>())?);
        let host_x = unsafe { PinnedAlloc::zeroed(&ctx, t * b * i * f, false) }?;
        let host_ready = unsafe { PinnedAlloc::zeroed(&ctx, 128, false) }?;
        upload(w_hh.ptr(), &w.w_hh)?;
        upload(w_ih.ptr(), &w.w_ih)?;
        upload(bias.ptr(), &w.bias)?;
        let params = RnnParams {
            w_hh: w_hh.ptr(),
            w_ih: w_ih.ptr(),
            bias: bias.ptr(),
            h0: h0.ptr(),
            x: x.ptr(),
            out: out.ptr(),
            sync: sync.ptr(),
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
        let (smem, step_smem) = (SmemLayout::new(&params, true).bytes(), SmemLayout::new(&params, false).bytes());
        let optin = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as usize;
        if smem > optin {
            return Err(Error::Config(format!(
                "the persistent RNN needs {smem} bytes of shared memory per block; the device allows {optin}"
            )));
        }
        for (func, bytes) in [(rnn, smem), (step, step_smem)] {
            if bytes > DEFAULT_SMEM {
                let attr = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
                check(unsafe { sys::cuFuncSetAttribute(func, attr, bytes as i32) }, "cuFuncSetAttribute(max dynamic shared memory)")?;
            }
        }
        let mut per_sm = 0;
        check(
            unsafe { sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut per_sm, rnn, BLOCK as i32, smem) },
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        )?;
        if (per_sm.max(0) as u32) * sms < blocks {
            return Err(Error::Config(format!("the persistent RNN needs {blocks} co-resident blocks; {per_sm} per SM fit on {sms} SMs")));
        }
        let (compute, feeder, control) = (Stream::non_blocking(&ctx, 0)?, Stream::non_blocking(&ctx, 0)?, Stream::non_blocking(&ctx, 0)?);
        Ok(Self {
            graph: None,
            _weights: [w_hh, w_ih, bias],
            h0,
            x,
            out,
            sync,
            host_x,
            host_ready,
            rnn,
            feed,
            step,
            _module: module,
            compute,
            feeder,
            control,
            ctx,
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
        self.ctx.bind()?;
        upload(self.h0.ptr(), h0)?;
        check(unsafe { sys::cuMemsetD32_v2(self.out.ptr(), f32::NAN.to_bits(), self.shape.out_len()) }, "cuMemsetD32(out)")
    }

    fn host_ready(&self) -> &AtomicU32 {
        // SAFETY: 128 bytes of pinned memory, 4-aligned, alive as long as self.
        unsafe { AtomicU32::from_ptr(self.host_ready.host_ptr() as *mut u32) }
    }

    fn download_out(&self) -> Result<Vec<f32>> {
        let mut out = vec![0f32; self.shape.out_len()];
        check(unsafe { sys::cuMemcpyDtoH_v2(out.as_mut_ptr() as *mut c_void, self.out.ptr(), out.len() * 4) }, "cuMemcpyDtoH(out)")?;
        Ok(out)
    }

    fn status(&self) -> Result<u32> {
        let mut v = 0u32;
        let at = self.sync.ptr() + std::mem::offset_of!(RnnSync, status) as u64;
        check(unsafe { sys::cuMemcpyDtoH_v2(&raw mut v as *mut c_void, at, 4) }, "cuMemcpyDtoH(status)")?;
        Ok(v)
    }

    /// Asks the RNN's kernels to leave (they poll `abort`).
    fn abort(&self) -> Result<()> {
        let abort = self.sync.ptr() + std::mem::offset_of!(RnnSync, abort) as u64;
        // A memset on its own stream; pairs with the kernels' ld.acquire.sys of `abort`.
        check(unsafe { sys::cuMemsetD32Async(abort, 1, 1, self.control.raw()) }, "cuMemsetD32Async(abort)")?;
        self.control.synchronize()
    }

    /// Waits for `stream` until the device's own bound (per wait) plus a grace period and
    /// 100 µs per step; then aborts (the kernels poll `abort`) and reports a timeout.
    fn wait(&self, stream: &Stream) -> Result<()> {
        let bound = Duration::from_millis(TIMEOUT_MS as u64) + HOST_GRACE + Duration::from_micros(100 * self.shape.steps as u64);
        let deadline = Instant::now() + bound * self.time_scale;
        loop {
            match stream.state() {
                StreamState::Idle => return Ok(()),
                StreamState::Failed(e) => return Err(e),
                StreamState::Busy if Instant::now() < deadline => std::thread::yield_now(),
                StreamState::Busy => {
                    self.abort()?;
                    let _ = stream.synchronize();
                    return Err(Error::Timeout);
                }
            }
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
        check(unsafe { sys::cuMemsetD8_v2(self.sync.ptr(), 0, size_of::<RnnSync>()) }, "cuMemsetD8(sync)")?;
        let per_step = (s.batch * s.input) as usize;
        match feed {
            Feed::Device => {
                upload(self.x.ptr(), xs)?;
                let at = self.sync.ptr() + std::mem::offset_of!(RnnSync, x_ready) as u64;
                check(unsafe { sys::cuMemcpyHtoD_v2(at, &raw const s.steps as *const c_void, 4) }, "cuMemcpyHtoD(x_ready)")?;
            }
            Feed::HostAhead => {
                // SAFETY: host_x holds steps × batch × input floats; nothing reads it now.
                unsafe { std::ptr::copy_nonoverlapping(xs.as_ptr(), self.host_x.host_ptr() as *mut f32, xs.len()) };
                // Release: the inputs before the feeder's ld.acquire.sys of the count.
                self.host_ready().store(s.steps, Ordering::Release);
            }
            Feed::HostLive => self.host_ready().store(0, Ordering::Release),
        }
        let mut p = self.params;
        let start = Instant::now();
        if feed != Feed::Device {
            // Launched first, so that it is resident before the RNN's blocks take the SMs.
            let mut args = [&raw mut p as *mut c_void];
            check(
                unsafe {
                    sys::cuLaunchKernel(
                        self.feed,
                        1,
                        1,
                        1,
                        FEED_BLOCK,
                        1,
                        1,
                        16,
                        self.feeder.raw(),
                        args.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                },
                "cuLaunchKernel(resident_rnn_feed)",
            )?;
        }
        let mut args = [&raw mut p as *mut c_void];
        let launched = check(
            unsafe {
                sys::cuLaunchCooperativeKernel(
                    self.rnn,
                    self.blocks,
                    1,
                    1,
                    BLOCK,
                    1,
                    1,
                    self.smem as u32,
                    self.compute.raw(),
                    args.as_mut_ptr(),
                )
            },
            "cuLaunchCooperativeKernel(resident_rnn)",
        );
        if let Err(e) = launched {
            // The feeder would wait for inputs nobody uses: tell it to leave.
            self.abort()?;
            let _ = self.feeder.synchronize();
            return Err(e);
        }
        if feed == Feed::HostLive {
            let base = self.host_x.host_ptr() as *mut f32;
            for t in 0..s.steps as usize {
                // SAFETY: step t's slot of host_x; the feeder reads it only after the
                // release store below.
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
        match self.status()? {
            rnn_status::OK => Ok(RnnRun { out: self.download_out()?, elapsed }),
            code => Err(Error::DeviceFault(format!("persistent RNN: {}", rnn_status::name(code)))),
        }
    }

    fn launch_steps(&self) -> Result<()> {
        for t in 0..self.shape.steps {
            let mut p = RnnParams { step: t, ..self.params };
            let mut args = [&raw mut p as *mut c_void];
            check(
                unsafe {
                    sys::cuLaunchKernel(
                        self.step,
                        self.blocks,
                        1,
                        1,
                        BLOCK,
                        1,
                        1,
                        self.step_smem as u32,
                        self.compute.raw(),
                        args.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                },
                "cuLaunchKernel(resident_rnn_step)",
            )?;
        }
        Ok(())
    }

    pub fn per_step(&mut self, h0: &[f32], xs: &[f32]) -> Result<RnnRun> {
        self.prepare(h0)?;
        upload(self.x.ptr(), xs)?;
        let start = Instant::now();
        self.launch_steps()?;
        self.compute.synchronize()?;
        Ok(RnnRun { elapsed: start.elapsed(), out: self.download_out()? })
    }

    pub fn per_step_graph(&mut self, h0: &[f32], xs: &[f32]) -> Result<RnnRun> {
        self.prepare(h0)?;
        upload(self.x.ptr(), xs)?;
        if self.graph.is_none() {
            self.graph = Some(CapturedGraph::capture(&self.compute, || self.launch_steps())?);
        }
        let start = Instant::now();
        self.graph.as_ref().expect("captured above").replay(&self.compute)?;
        Ok(RnnRun { elapsed: start.elapsed(), out: self.download_out()? })
    }
}

impl Drop for CudaRnn {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        let _ = self.compute.synchronize();
        let _ = self.feeder.synchronize();
    }
}
