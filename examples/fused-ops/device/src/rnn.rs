//! The persistent RNN: `h_t = tanh(W_hh h_{t-1} + W_ih x_t + b)`, fp32, for a batch of
//! sequences, in ONE launch that steps through the whole sequence.
//!
//! Why a kernel of its own and not queue tasks: the weights stay in shared memory for
//! the whole sequence, which needs every row to stay on the block that loaded it; the
//! queue hands tasks to whichever warp claims them. So each block owns rows
//! `[block * rows_per_block, ..)` of `W_hh` and `W_ih` and keeps them in shared memory,
//! and the blocks meet at a grid barrier after each time step. The grid must be
//! co-resident (the host launches it cooperatively, sized by the occupancy query).
//!
//! Per step `t`, every block (its thread 0 waits, the block follows through barriers):
//! 1. waits until `x_ready > t` (`ld.acquire.gpu`; pairs with the feeder's
//!    `st.release.gpu`, [`feed`]): the inputs of step `t` are in device memory (thread 0
//!    remembers the value it acquired, so steps below it need no new load);
//! 2. stages `h_{t-1}` (all rows, all sequences of the batch) and `x_t` into shared
//!    memory;
//! 3. computes its rows of `h_t` (a warp per row, lanes across the row, `float4`
//!    shared loads) and stores them to `out[t]`;
//! 4. grid barrier: `bar.sync`, then thread 0 adds one to `arrive` with
//!    `atom.acq_rel.gpu` (release: the block's stores of `h_t`, ordered before it by the
//!    `bar.sync`, are cumulative in it) and loads `arrive` with `ld.acquire.gpu` until it
//!    reaches `(t + 1) * blocks` (acquire: every block's `h_t`), then `bar.sync` again
//!    (so every thread's later loads of `h_t` follow thread 0's acquire).
//!
//! Every wait is bounded: it ends on `abort` (set by the host), on a failure another
//! block reported in `status`, or after `timeout_ms` of waiting, with a status code.
//!
//! Inputs: the host writes `x_t` into mapped pinned memory and then publishes the count
//! of ready steps in `host_ready` (release). The feeder, one block of its own kernel,
//! copies ready steps into device memory and publishes `x_ready` (release, .gpu), so
//! only one block ever polls host memory (polling it from every SM collapses: DESIGN.md).
//! When the inputs are already in device memory, the host sets `x_ready = steps` and
//! launches no feeder.
//!
//! The baseline ([`step_block`]) is one launch per time step: the same staging and the
//! same row computation, reading the weights from global memory each step.

use bytemuck::{Pod, Zeroable};
use resident_device::shared::CachePadded;

use super::math::{tanh_f32, warp_sum};
use resident_device::arch;

/// Most sequences in a batch (accumulators per lane).
pub const MAX_BATCH: u32 = 8;

/// The kernels' one by-value argument. Addresses are device addresses (CUDA) or host
/// addresses (CPU backend).
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
pub struct RnnParams {
    /// `hidden × hidden`, row-major.
    pub w_hh: u64,
    /// `hidden × input`, row-major.
    pub w_ih: u64,
    /// `hidden`.
    pub bias: u64,
    /// Initial state, `batch × hidden`.
    pub h0: u64,
    /// Inputs in device memory, `steps × batch × input` (filled by the feeder).
    pub x: u64,
    /// Outputs, `steps × batch × hidden`: `h_t` for every step.
    pub out: u64,
    /// The [`RnnSync`] words (device memory).
    pub sync: u64,
    /// Inputs as the host writes them (mapped pinned memory), same layout as `x`.
    pub host_x: u64,
    /// A `u32` in mapped pinned memory: how many steps' inputs the host has written.
    pub host_ready: u64,
    pub hidden: u32,
    pub input: u32,
    pub batch: u32,
    pub steps: u32,
    pub rows_per_block: u32,
    /// The step the per-step baseline computes.
    pub step: u32,
    /// Bound on every wait, in milliseconds.
    pub timeout_ms: u32,
    pub _pad: u32,
}
const _: () = assert!(core::mem::size_of::<RnnParams>() == 104);

/// The device-side synchronization words, each on its own line.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
pub struct RnnSync {
    /// Grid-barrier arrivals, monotonic: `(t + 1) * blocks` once step `t` is done.
    pub arrive: CachePadded,
    /// Steps whose inputs are in device memory (written by the feeder or the host).
    pub x_ready: CachePadded,
    /// Nonzero: the host asks every block to stop.
    pub abort: CachePadded,
    /// The first failure: an [`rnn_status`] code (0 while fine).
    pub status: CachePadded,
    /// Steps the feeder has copied (for diagnostics; equals `x_ready`).
    pub fed: CachePadded,
}

/// Codes in [`RnnSync::status`].
pub mod rnn_status {
    pub const OK: u32 = 0;
    pub const INPUT_TIMEOUT: u32 = 1;
    pub const BARRIER_TIMEOUT: u32 = 2;
    pub const ABORTED: u32 = 3;
    pub const BAD_PARAMS: u32 = 4;
    pub const HOST_TIMEOUT: u32 = 5;

    pub const fn name(code: u32) -> &'static str {
        match code {
            OK => "ok",
            INPUT_TIMEOUT => "timed out waiting for the inputs of a step",
            BARRIER_TIMEOUT => "timed out at the grid barrier (a block is not running: is the grid co-resident?)",
            ABORTED => "aborted by the host",
            BAD_PARAMS => "inconsistent parameters",
            HOST_TIMEOUT => "the feeder timed out waiting for the host's inputs",
            _ => "unknown status",
        }
    }
}

/// Where each array lives in a block's shared memory (offsets in floats, each a
/// multiple of 4 so that `float4` loads stay aligned).
#[derive(Clone, Copy, Debug)]
pub struct SmemLayout {
    pub w_hh: usize,
    pub w_ih: usize,
    pub bias: usize,
    pub h: usize,
    pub x: usize,
    pub flag: usize,
    /// Total floats.
    pub floats: usize,
}

impl SmemLayout {
    /// The persistent kernel's layout (weights resident); `with_weights = false` gives
    /// the baseline's (only the staged state and inputs).
    pub const fn new(p: &RnnParams, with_weights: bool) -> Self {
        const fn up(v: usize) -> usize {
            v.next_multiple_of(4)
        }
        let (h, i, b, r) = (p.hidden as usize, p.input as usize, p.batch as usize, p.rows_per_block as usize);
        let (wh, wi, bs) = if with_weights { (up(r * h), up(r * i), up(r)) } else { (0, 0, 0) };
        let w_hh = 0;
        let w_ih = w_hh + wh;
        let bias = w_ih + wi;
        let hs = bias + bs;
        let x = hs + up(b * h);
        let flag = x + up(b * i);
        Self { w_hh, w_ih, bias, h: hs, x, flag, floats: flag + 4 }
    }
    pub const fn bytes(&self) -> usize {
        self.floats * 4
    }
}

/// Whether the parameters are consistent (sizes multiples of 4, batch at most
/// [`MAX_BATCH`], enough blocks for every row).
pub const fn params_ok(p: &RnnParams, blocks: u32) -> bool {
    p.hidden > 0
        && p.input > 0
        && p.hidden.is_multiple_of(4)
        && p.input.is_multiple_of(4)
        && p.batch > 0
        && p.batch <= MAX_BATCH
        && p.rows_per_block > 0
        && (blocks as u64) * (p.rows_per_block as u64) >= p.hidden as u64
}

#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct F4([f32; 4]);

#[inline(always)]
unsafe fn ld4(p: *const f32) -> [f32; 4] {
    unsafe { (p as *const F4).read() }.0
}

/// Copies `n` floats (`n` a multiple of 4, both 16-byte aligned) with the block's threads.
#[inline(always)]
unsafe fn copy_block(dst: *mut f32, src: *const f32, n: usize, tid: u32, nthreads: u32) {
    let mut i = tid as usize;
    while i < n / 4 {
        unsafe { (dst as *mut F4).add(i).write((src as *const F4).add(i).read()) };
        i += nthreads as usize;
    }
}

/// Computes rows `r0 .. r0 + rows` of `h_t` for every sequence of the batch: row `r` on
/// warp `r % warps`, lanes across the row. `w_hh`, `w_ih`, `bias` point at row `r0`
/// (shared memory in the persistent kernel, global memory in the baseline); `h` and
/// `x` at the staged `h_{t-1}` and `x_t`.
///
/// # Safety
/// Valid, 16-byte aligned arrays of the sizes the parameters imply.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn step_rows(
    p: &RnnParams,
    w_hh: *const f32,
    w_ih: *const f32,
    bias: *const f32,
    h: *const f32,
    x: *const f32,
    out_t: *mut f32,
    r0: u32,
    rows: u32,
    warp: u32,
    warps: u32,
) {
    let (hd, id) = (p.hidden as usize, p.input as usize);
    let lane = arch::lane_id() as usize;
    let stride = 4 * arch::WARP as usize;
    let mut r = warp;
    while r < rows {
        let mut acc = [0f32; MAX_BATCH as usize];
        let wr = w_hh.wrapping_add(r as usize * hd);
        let mut j = 4 * lane;
        while j < hd {
            let w = unsafe { ld4(wr.add(j)) };
            for (b, a) in acc.iter_mut().enumerate() {
                if (b as u32) < p.batch {
                    let v = unsafe { ld4(h.add(b * hd + j)) };
                    for e in 0..4 {
                        *a = arch::fmaf(w[e], v[e], *a);
                    }
                }
            }
            j += stride;
        }
        let wr = w_ih.wrapping_add(r as usize * id);
        let mut j = 4 * lane;
        while j < id {
            let w = unsafe { ld4(wr.add(j)) };
            for (b, a) in acc.iter_mut().enumerate() {
                if (b as u32) < p.batch {
                    let v = unsafe { ld4(x.add(b * id + j)) };
                    for e in 0..4 {
                        *a = arch::fmaf(w[e], v[e], *a);
                    }
                }
            }
            j += stride;
        }
        let bias_r = unsafe { *bias.add(r as usize) };
        if arch::WARP >= MAX_BATCH {
            // Lane b finishes sequence b: the sums in an unrolled loop (the accumulators
            // stay in registers), one tanh per lane.
            let mut mine = 0f32;
            for (b, a) in acc.iter().enumerate() {
                if (b as u32) < p.batch {
                    let s = warp_sum(*a);
                    if lane == b {
                        mine = s;
                    }
                }
            }
            if (lane as u32) < p.batch {
                unsafe { *out_t.add(lane * hd + (r0 + r) as usize) = tanh_f32(mine + bias_r) };
            }
        } else {
            for (b, a) in acc.iter().enumerate() {
                if (b as u32) < p.batch {
                    let s = warp_sum(*a);
                    if lane == 0 {
                        unsafe { *out_t.add(b * hd + (r0 + r) as usize) = tanh_f32(s + bias_r) };
                    }
                }
            }
        }
        r += warps;
    }
}

/// Thread 0 of a block waits until `*word` reaches `target` (wrapping distance);
/// `Err(status)` on abort, another block's failure, or `timeout_ns` after the first
/// poll (a bound per wait: a live-fed sequence may run for as long as the host feeds it).
///
/// # Safety
/// `word` and `s` must be live device words.
#[inline(always)]
unsafe fn wait_for(word: *const u32, target: u32, s: *mut RnnSync, timeout_ns: u64, on_timeout: u32) -> Result<u32, u32> {
    let mut polls = 0u32;
    let mut deadline = u64::MAX;
    loop {
        // Acquire, .gpu: pairs with the release that raised the word (a block's arrive
        // add, or the feeder's store of x_ready).
        let v = unsafe { arch::ld_acquire_gpu(word) };
        if v.wrapping_sub(target) as i32 >= 0 {
            return Ok(v);
        }
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(16) {
            // Acquire, .sys: pairs with the host's write of `abort` (a memset on its own
            // stream, or a store on the CPU backend).
            if unsafe { arch::ld_acquire_sys(&raw const (*s).abort.value) } != 0 {
                return Err(rnn_status::ABORTED);
            }
            // Relaxed: another block's failure only makes this one leave early.
            let st = unsafe { arch::ld_relaxed_gpu(&raw const (*s).status.value) };
            if st != rnn_status::OK {
                return Err(st);
            }
            let now = arch::globaltimer();
            if deadline == u64::MAX {
                deadline = now.saturating_add(timeout_ns);
            } else if now > deadline {
                return Err(on_timeout);
            }
            // Short naps once the wait is long: the barrier is on the critical path.
            if polls > 256 {
                arch::nanosleep(64);
            }
        }
    }
}

/// Records the first failure (relaxed CAS from OK: later ones keep the first code).
#[inline(always)]
unsafe fn fail(s: *mut RnnSync, code: u32) {
    unsafe { arch::atom_cas_relaxed_gpu(&raw mut (*s).status.value, rnn_status::OK, code) };
}

/// Thread 0's verdict, for the whole block: stored in shared memory, a block barrier,
/// read by every thread. The barrier also orders thread 0's acquire before every
/// thread's later loads. Each call site has its own `flag` slot, rewritten only after a
/// later block barrier that every reader of its previous value has passed.
#[inline(always)]
unsafe fn block_agree(flag: *mut u32, ok: bool, tid: u32) -> bool {
    if tid == 0 {
        unsafe { flag.write_volatile(ok as u32) };
    }
    arch::sync_block();
    unsafe { flag.read_volatile() != 0 }
}

/// One block of the persistent RNN (see the module doc). Every thread of the block
/// calls, with its index `tid < nthreads`; the block's warps are `nthreads / WARP`.
///
/// # Safety
/// `p` must describe live buffers of the sizes it names; `smem` must be 16-byte aligned
/// and hold [`SmemLayout::new`]`(p, true).floats` floats, private to the block; all
/// `blocks` blocks must run concurrently.
#[inline(always)]
pub unsafe fn persistent_block(p: &RnnParams, smem: *mut f32, block: u32, blocks: u32, tid: u32, nthreads: u32) {
    let s = p.sync as *mut RnnSync;
    let lay = SmemLayout::new(p, true);
    let flag = smem.wrapping_add(lay.flag) as *mut u32;
    if !params_ok(p, blocks) {
        if tid == 0 {
            unsafe { fail(s, rnn_status::BAD_PARAMS) };
        }
        return;
    }
    let (hd, id, bt) = (p.hidden as usize, p.input as usize, p.batch as usize);
    let r0 = (block * p.rows_per_block).min(p.hidden);
    let rows = p.rows_per_block.min(p.hidden - r0);
    let (s_w, s_wi, s_b, s_h, s_x) = (
        smem.wrapping_add(lay.w_hh),
        smem.wrapping_add(lay.w_ih),
        smem.wrapping_add(lay.bias),
        smem.wrapping_add(lay.h),
        smem.wrapping_add(lay.x),
    );
    unsafe {
        copy_block(s_w, (p.w_hh as *const f32).add(r0 as usize * hd), rows as usize * hd, tid, nthreads);
        copy_block(s_wi, (p.w_ih as *const f32).add(r0 as usize * id), rows as usize * id, tid, nthreads);
        let mut i = tid;
        while i < rows {
            *s_b.add(i as usize) = *(p.bias as *const f32).add((r0 + i) as usize);
            i += nthreads;
        }
    }
    let (warp, warps) = (tid / arch::WARP, (nthreads / arch::WARP).max(1));
    let timeout_ns = p.timeout_ms as u64 * 1_000_000;
    // Thread 0: the last value of x_ready it acquired. That acquire already orders the
    // loads of every step below it, so those steps need no new load (as the queue's
    // workers cache `tail`); with the inputs in device memory, one load in all.
    let mut ready = 0u32;
    for t in 0..p.steps {
        // 1. Inputs of step t.
        let mut ok = true;
        if tid == 0 && ready <= t {
            match unsafe { wait_for(&raw const (*s).x_ready.value, t + 1, s, timeout_ns, rnn_status::INPUT_TIMEOUT) } {
                Ok(v) => ready = v.min(p.steps),
                Err(code) => {
                    unsafe { fail(s, code) };
                    ok = false;
                }
            }
        }
        if !unsafe { block_agree(flag, ok, tid) } {
            return;
        }
        // 2. Stage h_{t-1} and x_t.
        let h_prev = if t == 0 { p.h0 as *const f32 } else { (p.out as *const f32).wrapping_add((t as usize - 1) * bt * hd) };
        unsafe {
            copy_block(s_h, h_prev, bt * hd, tid, nthreads);
            copy_block(s_x, (p.x as *const f32).add(t as usize * bt * id), bt * id, tid, nthreads);
        }
        arch::sync_block();
        // 3. This block's rows of h_t.
        let out_t = (p.out as *mut f32).wrapping_add(t as usize * bt * hd);
        unsafe { step_rows(p, s_w, s_wi, s_b, s_h, s_x, out_t, r0, rows, warp, warps) };
        // 4. Grid barrier: every block's h_t before anyone's step t + 1.
        arch::sync_block();
        let mut ok = true;
        if tid == 0 {
            // Release (cumulative over the block's stores, ordered by the bar.sync
            // above), acquire (the chain of earlier arrivals).
            unsafe { arch::atom_add_acq_rel_gpu(&raw mut (*s).arrive.value, 1) };
            if let Err(code) =
                unsafe { wait_for(&raw const (*s).arrive.value, (t + 1).wrapping_mul(blocks), s, timeout_ns, rnn_status::BARRIER_TIMEOUT) }
            {
                unsafe { fail(s, code) };
                ok = false;
            }
        }
        // Slot 1: a thread may still be reading this verdict when thread 0 writes the
        // next step's input verdict, into slot 0.
        if !unsafe { block_agree(flag.wrapping_add(1), ok, tid) } {
            return;
        }
    }
}

/// One block of the baseline's launch for step `p.step`: stages `h_{t-1}` and `x_t`,
/// computes its rows reading the weights from global memory. Kernel completion orders
/// it before the next step's launch.
///
/// # Safety
/// As for [`persistent_block`], with `smem` of [`SmemLayout::new`]`(p, false).floats`
/// floats, and the inputs of the step already in `p.x`.
#[inline(always)]
pub unsafe fn step_block(p: &RnnParams, smem: *mut f32, block: u32, tid: u32, nthreads: u32) {
    let lay = SmemLayout::new(p, false);
    let (hd, id, bt) = (p.hidden as usize, p.input as usize, p.batch as usize);
    let t = p.step;
    if t >= p.steps || block * p.rows_per_block >= p.hidden {
        return;
    }
    let r0 = block * p.rows_per_block;
    let rows = p.rows_per_block.min(p.hidden - r0);
    let (s_h, s_x) = (smem.wrapping_add(lay.h), smem.wrapping_add(lay.x));
    let h_prev = if t == 0 { p.h0 as *const f32 } else { (p.out as *const f32).wrapping_add((t as usize - 1) * bt * hd) };
    unsafe {
        copy_block(s_h, h_prev, bt * hd, tid, nthreads);
        copy_block(s_x, (p.x as *const f32).add(t as usize * bt * id), bt * id, tid, nthreads);
    }
    arch::sync_block();
    let out_t = (p.out as *mut f32).wrapping_add(t as usize * bt * hd);
    let (w_hh, w_ih, bias) = (
        (p.w_hh as *const f32).wrapping_add(r0 as usize * hd),
        (p.w_ih as *const f32).wrapping_add(r0 as usize * id),
        (p.bias as *const f32).wrapping_add(r0 as usize),
    );
    unsafe { step_rows(p, w_hh, w_ih, bias, s_h, s_x, out_t, r0, rows, tid / arch::WARP, (nthreads / arch::WARP).max(1)) };
}

/// The feeder: one block that copies the host's inputs (mapped pinned memory) into
/// device memory as the host publishes them, a few steps at a time, and publishes
/// `x_ready` after each piece.
///
/// Orderings: thread 0 loads `host_ready` with `ld.acquire.sys` (pairs with the host's
/// release store after it wrote the inputs); a block barrier orders that acquire before
/// every thread's loads of the inputs; every thread's stores into `x`, a block barrier,
/// then thread 0's `st.release.gpu` of `x_ready` (pairs with the compute blocks'
/// `ld.acquire.gpu`).
///
/// # Safety
/// As for [`persistent_block`]; `smem` needs 4 floats.
#[inline(always)]
pub unsafe fn feed(p: &RnnParams, smem: *mut f32, tid: u32, nthreads: u32) {
    /// Steps copied per publication: the compute starts after the first piece.
    const PIECE: u32 = 4;
    let s = p.sync as *mut RnnSync;
    let flag = smem as *mut u32;
    let per_step = p.batch as usize * p.input as usize;
    let timeout_ns = p.timeout_ms as u64 * 1_000_000;
    let mut done = 0u32;
    let mut avail = 0u32;
    while done < p.steps {
        let mut ok = true;
        if tid == 0 && avail <= done {
            let mut polls = 0u32;
            // A bound per wait for the host (see `wait_for`).
            let deadline = arch::globaltimer().saturating_add(timeout_ns);
            loop {
                // Acquire, .sys: pairs with the host's release store of `host_ready`.
                avail = unsafe { arch::ld_acquire_sys(p.host_ready as *const u32) }.min(p.steps);
                if avail > done {
                    break;
                }
                polls = polls.wrapping_add(1);
                if unsafe { arch::ld_acquire_sys(&raw const (*s).abort.value) } != 0 {
                    unsafe { fail(s, rnn_status::ABORTED) };
                    ok = false;
                    break;
                }
                if unsafe { arch::ld_relaxed_gpu(&raw const (*s).status.value) } != rnn_status::OK {
                    ok = false;
                    break;
                }
                if polls.is_multiple_of(16) && arch::globaltimer() > deadline {
                    unsafe { fail(s, rnn_status::HOST_TIMEOUT) };
                    ok = false;
                    break;
                }
                arch::nanosleep(256);
            }
        }
        if tid == 0 {
            unsafe { flag.add(1).write_volatile(avail) };
        }
        if !unsafe { block_agree(flag, ok, tid) } {
            return;
        }
        avail = unsafe { flag.add(1).read_volatile() };
        let end = avail.min(done + PIECE);
        let (from, to) = (done as usize * per_step, end as usize * per_step);
        unsafe { copy_block((p.x as *mut f32).add(from), (p.host_x as *const f32).add(from), to - from, tid, nthreads) };
        arch::sync_block();
        if tid == 0 {
            unsafe {
                arch::st_relaxed_gpu(&raw mut (*s).fed.value, end);
                // Release, .gpu: every thread's copies (ordered by the bar.sync above)
                // before the compute blocks' acquire of x_ready.
                arch::st_release_gpu(&raw mut (*s).x_ready.value, end);
            }
        }
        done = end;
    }
}

/// The persistent RNN as a kernel (`resident_rnn`): launch cooperatively (all blocks
/// co-resident) with `SmemLayout::new(p, true).bytes()` of dynamic shared memory and a
/// multiple of 32 threads per block.
pub struct PersistentRnn;
/// The RNN's input feeder (`resident_rnn_feed`): launch one block, on a stream of its
/// own, before `resident_rnn`, with 16 bytes of dynamic shared memory.
pub struct Feed;
/// The per-step baseline (`resident_rnn_step`): one launch computes step `p.step`;
/// launch with `SmemLayout::new(p, false).bytes()` of dynamic shared memory.
pub struct Step;

impl resident_device::DeviceKernel for PersistentRnn {
    type Params = RnnParams;
    #[inline(always)]
    unsafe fn run(p: &RnnParams) {
        let smem = arch::dyn_smem() as *mut f32;
        unsafe { persistent_block(p, smem, arch::block_idx(), arch::grid_dim(), arch::thread_idx(), arch::block_dim()) }
    }
}
impl resident_device::DeviceKernel for Feed {
    type Params = RnnParams;
    #[inline(always)]
    unsafe fn run(p: &RnnParams) {
        if arch::block_idx() == 0 {
            unsafe { feed(p, arch::dyn_smem() as *mut f32, arch::thread_idx(), arch::block_dim()) }
        }
    }
}
impl resident_device::DeviceKernel for Step {
    type Params = RnnParams;
    #[inline(always)]
    unsafe fn run(p: &RnnParams) {
        let smem = arch::dyn_smem() as *mut f32;
        unsafe { step_block(p, smem, arch::block_idx(), arch::thread_idx(), arch::block_dim()) }
    }
}
