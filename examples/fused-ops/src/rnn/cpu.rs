//! The RNN on the CPU backend: the device functions of `resident_device::nn::rnn` on
//! threads, one per block (a block of one thread, a warp of one lane) plus the feeder,
//! over host memory; the same orderings hold through `core::sync::atomic`.

use fused_ops_device::rnn::{self, RnnParams, RnnSync, SmemLayout, rnn_status};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use super::{Feed, RnnRun, RnnShape, RnnWeights};
use resident::{Error, Result};

/// Blocks (threads) of the CPU persistent RNN.
const BLOCKS: u32 = 4;
/// Bound on every wait (CI machines are slow and shared).
const TIMEOUT_MS: u32 = 60_000;

/// 16-byte aligned floats: the device code loads `float4`s.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct F4([f32; 4]);

struct Aligned {
    v: Vec<F4>,
    len: usize,
}

impl Aligned {
    fn zeroed(len: usize) -> Self {
        Self { v: vec![F4::default(); len.div_ceil(4).max(1)], len }
    }
    fn from(data: &[f32]) -> Self {
        let mut a = Self::zeroed(data.len());
        a.slice_mut().copy_from_slice(data);
        a
    }
    fn addr(&mut self) -> u64 {
        self.v.as_mut_ptr() as u64
    }
    fn slice_mut(&mut self) -> &mut [f32] {
        // SAFETY: F4 is four f32s without padding; `len <= 4 * v.len()`.
        unsafe { std::slice::from_raw_parts_mut(self.v.as_mut_ptr() as *mut f32, self.len) }
    }
}

pub(crate) struct CpuRnn {
    shape: RnnShape,
    w_hh: Aligned,
    w_ih: Aligned,
    bias: Aligned,
    rows: u32,
    blocks: u32,
}

impl CpuRnn {
    pub fn new(shape: RnnShape, w: &RnnWeights) -> Self {
        let rows = shape.hidden.div_ceil(BLOCKS);
        let blocks = shape.hidden.div_ceil(rows);
        Self { shape, w_hh: Aligned::from(&w.w_hh), w_ih: Aligned::from(&w.w_ih), bias: Aligned::from(&w.bias), rows, blocks }
    }

    pub fn describe(&self) -> String {
        format!("CPU: {} block threads x {} rows, plus a feeder thread", self.blocks, self.rows)
    }

    fn params(
        &mut self,
        h0: &mut Aligned,
        x: &mut Aligned,
        out: &mut Aligned,
        sync: &mut RnnSync,
        host_x: &mut Aligned,
        host_ready: &AtomicU32,
    ) -> RnnParams {
        let s = self.shape;
        RnnParams {
            w_hh: self.w_hh.addr(),
            w_ih: self.w_ih.addr(),
            bias: self.bias.addr(),
            h0: h0.addr(),
            x: x.addr(),
            out: out.addr(),
            sync: sync as *mut RnnSync as u64,
            host_x: host_x.addr(),
            host_ready: host_ready.as_ptr() as u64,
            hidden: s.hidden,
            input: s.input,
            batch: s.batch,
            steps: s.steps,
            rows_per_block: self.rows,
            step: 0,
            timeout_ms: TIMEOUT_MS,
            _pad: 0,
        }
    }

    pub fn persistent(&mut self, h0: &[f32], xs: &[f32], feed: Feed) -> Result<RnnRun> {
        let s = self.shape;
        let (mut h0, mut out) = (Aligned::from(h0), Aligned::from(&vec![f32::NAN; s.out_len()]));
        let mut x = if feed == Feed::Device { Aligned::from(xs) } else { Aligned::zeroed(xs.len()) };
        let mut host_x = if feed == Feed::HostAhead { Aligned::from(xs) } else { Aligned::zeroed(xs.len()) };
        let host_ready = AtomicU32::new(if feed == Feed::HostAhead { s.steps } else { 0 });
        let mut sync: Box<RnnSync> = Box::new(bytemuck::Zeroable::zeroed());
        if feed == Feed::Device {
            sync.x_ready.value = s.steps;
        }
        let p = self.params(&mut h0, &mut x, &mut out, &mut sync, &mut host_x, &host_ready);
        let layout = SmemLayout::new(&p, true);
        let per_step = (s.batch * s.input) as usize;
        let host_x_ptr = p.host_x as usize;
        let start = Instant::now();
        std::thread::scope(|sc| {
            for b in 0..self.blocks {
                let blocks = self.blocks;
                sc.spawn(move || {
                    let mut smem = Aligned::zeroed(layout.floats);
                    // SAFETY: the buffers outlive the scope; the blocks run concurrently.
                    unsafe { rnn::persistent_block(&p, smem.addr() as *mut f32, b, blocks, 0, 1) };
                });
            }
            if feed != Feed::Device {
                sc.spawn(move || {
                    let mut smem = Aligned::zeroed(4);
                    // SAFETY: as above.
                    unsafe { rnn::feed(&p, smem.addr() as *mut f32, 0, 1) };
                });
            }
            if feed == Feed::HostLive {
                for t in 0..s.steps as usize {
                    let dst = (host_x_ptr as *mut f32).wrapping_add(t * per_step);
                    // SAFETY: step t of host_x, which the feeder reads only after the
                    // release store below.
                    unsafe { std::ptr::copy_nonoverlapping(xs[t * per_step..].as_ptr(), dst, per_step) };
                    // Release: the step's inputs before the feeder's acquire of the count.
                    host_ready.store(t as u32 + 1, Ordering::Release);
                }
            }
        });
        let elapsed = start.elapsed();
        let status = sync.status.value;
        if status != rnn_status::OK {
            return Err(Error::DeviceFault(format!("persistent RNN: {}", rnn_status::name(status))));
        }
        Ok(RnnRun { out: out.slice_mut().to_vec(), elapsed })
    }

    pub fn per_step(&mut self, h0: &[f32], xs: &[f32]) -> RnnRun {
        let s = self.shape;
        let (mut h0, mut x, mut out) = (Aligned::from(h0), Aligned::from(xs), Aligned::from(&vec![f32::NAN; s.out_len()]));
        let (mut sync, mut host_x, host_ready): (Box<RnnSync>, _, _) =
            (Box::new(bytemuck::Zeroable::zeroed()), Aligned::zeroed(4), AtomicU32::new(0));
        let mut p = self.params(&mut h0, &mut x, &mut out, &mut sync, &mut host_x, &host_ready);
        let mut smem = Aligned::zeroed(SmemLayout::new(&p, false).floats);
        let start = Instant::now();
        for t in 0..s.steps {
            p.step = t;
            for b in 0..self.blocks {
                // SAFETY: the buffers hold the sizes the parameters name.
                unsafe { rnn::step_block(&p, smem.addr() as *mut f32, b, 0, 1) };
            }
        }
        RnnRun { elapsed: start.elapsed(), out: out.slice_mut().to_vec() }
    }
}
