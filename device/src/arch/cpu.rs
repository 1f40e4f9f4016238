//! Host implementation of [`crate::arch`], used by the CPU backend and unit tests.
//!
//! Scopes collapse: `.gpu` and `.sys` both become the C++ memory model's single scope.
//! A warp is one thread with one lane. Worker threads record their index in a
//! thread-local so that [`global_warp_id`] works as on the GPU.
#![allow(clippy::missing_safety_doc)]

use core::sync::atomic::{AtomicU32, Ordering, fence};
use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Lanes in a warp.
pub const WARP: u32 = 1;

std::thread_local! {
    static WORKER: Cell<(u32, u32)> = const { Cell::new((0, 1)) };
}

/// Called by the CPU backend on each worker thread before it enters the loop, and for
/// each block of an ordinary kernel it runs: this thread is block `index` of `count`.
pub fn set_worker(index: u32, count: u32) {
    WORKER.with(|w| w.set((index, count)));
}

/// This thread's lane within its warp: always 0.
#[inline(always)]
pub fn lane_id() -> u32 {
    0
}
/// Index of this worker (or block), as set by [`set_worker`].
pub fn global_warp_id() -> u32 {
    WORKER.with(|w| w.get().0)
}
/// Workers (or blocks) in the grid, as set by [`set_worker`].
pub fn global_warp_count() -> u32 {
    WORKER.with(|w| w.get().1)
}
/// The worker (or block) index, as [`global_warp_id`].
pub fn sm_id() -> u32 {
    global_warp_id()
}
/// A CPU worker (or a block of an ordinary kernel launched on the CPU backend) is a
/// block of one thread, one one-lane warp: its block index is its worker index.
pub fn block_idx() -> u32 {
    global_warp_id()
}
/// Blocks in the grid: the worker count.
pub fn grid_dim() -> u32 {
    global_warp_count()
}
/// Threads per block: 1.
pub fn block_dim() -> u32 {
    1
}
/// Thread index within the block: 0.
pub fn thread_idx() -> u32 {
    0
}

/// Nanoseconds since the first call in this process.
pub fn globaltimer() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Gives the core away: a worker thread that waits must not starve the producers that
/// share its cores (CI machines have two).
pub fn nanosleep(ns: u32) {
    if ns < 2_000 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_nanos(ns as u64));
    }
}

/// No cache hint on the CPU backend.
pub fn prefetch_l1(_p: *const u8) {}

#[inline(always)]
unsafe fn at<'a>(p: *const u32) -> &'a AtomicU32 {
    // SAFETY: the caller guarantees `p` is valid, aligned, and only accessed atomically
    // by other threads while shared.
    unsafe { AtomicU32::from_ptr(p as *mut u32) }
}

/// Load with acquire ordering (the `.sys` twin).
pub unsafe fn ld_acquire_sys(p: *const u32) -> u32 {
    unsafe { at(p) }.load(Ordering::Acquire)
}
/// Load with acquire ordering (the `.gpu` twin).
pub unsafe fn ld_acquire_gpu(p: *const u32) -> u32 {
    unsafe { at(p) }.load(Ordering::Acquire)
}
/// Relaxed atomic load (the `.sys` twin).
pub unsafe fn ld_relaxed_sys(p: *const u32) -> u32 {
    unsafe { at(p) }.load(Ordering::Relaxed)
}
/// Relaxed atomic load (the `.gpu` twin).
pub unsafe fn ld_relaxed_gpu(p: *const u32) -> u32 {
    unsafe { at(p) }.load(Ordering::Relaxed)
}
/// Store with release ordering (the `.gpu` twin).
pub unsafe fn st_release_gpu(p: *mut u32, v: u32) {
    unsafe { at(p) }.store(v, Ordering::Release)
}
/// Relaxed atomic store (the `.gpu` twin).
pub unsafe fn st_relaxed_gpu(p: *mut u32, v: u32) {
    unsafe { at(p) }.store(v, Ordering::Relaxed)
}
/// Store with release ordering (the `.sys` twin).
pub unsafe fn st_release_sys(p: *mut u32, v: u32) {
    unsafe { at(p) }.store(v, Ordering::Release)
}
/// Relaxed atomic store (the `.sys` twin).
pub unsafe fn st_relaxed_sys(p: *mut u32, v: u32) {
    unsafe { at(p) }.store(v, Ordering::Relaxed)
}
/// Atomic add, relaxed; returns the previous value.
pub unsafe fn atom_add_relaxed_gpu(p: *mut u32, v: u32) -> u32 {
    unsafe { at(p) }.fetch_add(v, Ordering::Relaxed)
}
/// Atomic add of an `f32`, relaxed (a compare-and-swap loop); returns the previous
/// value.
pub unsafe fn atom_add_relaxed_gpu_f32(p: *mut f32, v: f32) -> f32 {
    let a = unsafe { at(p as *const u32) };
    let mut old = a.load(Ordering::Relaxed);
    loop {
        match a.compare_exchange_weak(old, (f32::from_bits(old) + v).to_bits(), Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return f32::from_bits(old),
            Err(now) => old = now,
        }
    }
}
/// 64-bit load with acquire ordering.
pub unsafe fn ld_acquire_sys_u64(p: *const u64) -> u64 {
    unsafe { std::sync::atomic::AtomicU64::from_ptr(p as *mut u64) }.load(Ordering::Acquire)
}
/// 64-bit relaxed atomic load (the `.gpu` twin).
pub unsafe fn ld_relaxed_gpu_u64(p: *const u64) -> u64 {
    unsafe { std::sync::atomic::AtomicU64::from_ptr(p as *mut u64) }.load(Ordering::Relaxed)
}
/// Two consecutive `u64`s by relaxed atomic loads: the GPU's weak 16-byte load, for
/// data an earlier acquire already ordered (buffer-table entries, which the host
/// writes with relaxed atomic stores: a stale handle's task may read one while it
/// changes, a torn entry that fails its check, never a data race).
pub unsafe fn ld_weak_v2_u64(p: *const u64) -> (u64, u64) {
    let at = |k| unsafe { std::sync::atomic::AtomicU64::from_ptr(p.add(k) as *mut u64) }.load(Ordering::Relaxed);
    (at(0), at(1))
}
/// 64-bit relaxed atomic load (the `.sys` twin).
pub unsafe fn ld_relaxed_sys_u64(p: *const u64) -> u64 {
    unsafe { std::sync::atomic::AtomicU64::from_ptr(p as *mut u64) }.load(Ordering::Relaxed)
}
/// 64-bit relaxed atomic store (the `.sys` twin).
pub unsafe fn st_relaxed_sys_u64(p: *mut u64, v: u64) {
    unsafe { std::sync::atomic::AtomicU64::from_ptr(p) }.store(v, Ordering::Relaxed)
}
/// 64-bit store with release ordering.
pub unsafe fn st_release_sys_u64(p: *mut u64, v: u64) {
    unsafe { std::sync::atomic::AtomicU64::from_ptr(p) }.store(v, Ordering::Release)
}

/// Atomic compare-and-swap, relaxed; returns the previous value (the swap happened
/// iff it equals `expected`).
pub unsafe fn atom_cas_relaxed_gpu(p: *mut u32, expected: u32, new: u32) -> u32 {
    match unsafe { at(p) }.compare_exchange(expected, new, Ordering::Relaxed, Ordering::Relaxed) {
        Ok(v) | Err(v) => v,
    }
}
/// Atomic add, acquire-release; returns the previous value.
pub unsafe fn atom_add_acq_rel_gpu(p: *mut u32, v: u32) -> u32 {
    unsafe { at(p) }.fetch_add(v, Ordering::AcqRel)
}
/// 64-bit atomic add, acquire-release; returns the previous value.
pub unsafe fn atom_add_acq_rel_gpu_u64(p: *mut u64, v: u64) -> u64 {
    unsafe { std::sync::atomic::AtomicU64::from_ptr(p) }.fetch_add(v, Ordering::AcqRel)
}
/// 64-bit atomic add, release; returns the previous value.
pub unsafe fn atom_add_release_gpu_u64(p: *mut u64, v: u64) -> u64 {
    unsafe { std::sync::atomic::AtomicU64::from_ptr(p) }.fetch_add(v, Ordering::Release)
}
/// 64-bit atomic add, relaxed; returns the previous value.
pub unsafe fn atom_add_relaxed_gpu_u64(p: *mut u64, v: u64) -> u64 {
    unsafe { std::sync::atomic::AtomicU64::from_ptr(p) }.fetch_add(v, Ordering::Relaxed)
}
/// 64-bit relaxed atomic store (the `.gpu` twin).
pub unsafe fn st_relaxed_gpu_u64(p: *mut u64, v: u64) {
    unsafe { std::sync::atomic::AtomicU64::from_ptr(p) }.store(v, Ordering::Relaxed)
}
/// Acquire-release fence.
pub fn fence_acq_rel_sys() {
    fence(Ordering::AcqRel)
}
/// Acquire-release fence (the same as [`fence_acq_rel_sys`] here).
pub fn fence_acq_rel_gpu() {
    fence(Ordering::AcqRel)
}
/// Panics the calling worker, as a GPU trap aborts the kernel.
pub fn trap() -> ! {
    panic!("device trap on the CPU backend")
}
/// The fault-injection task's wild store, modelled: on the host a store through a forged
/// address would take the whole process down (or corrupt it silently), so the CPU
/// backend panics the worker as the GPU kills the kernel, and stores nothing.
pub unsafe fn store_forged(p: *mut u32, _v: u32) {
    panic!("illegal address {p:p} on the CPU backend (store not performed)")
}

/// Value of `v` in lane `src`: a one-lane warp has only `v`.
pub fn shfl_idx(v: u32, _src: u32) -> u32 {
    v
}
/// Bit 0 set iff the predicate holds (the one lane's vote).
pub fn ballot(pred: bool) -> u32 {
    pred as u32
}
/// The predicate holds in every lane: in the one lane.
pub fn all_lanes(pred: bool) -> bool {
    pred
}
/// Warp barrier: nothing to wait for in a one-lane warp.
pub fn syncwarp() {}

/// Bytes of "shared memory" each CPU worker thread has (the GPU's per-block limit is
/// set at launch; this is the CPU backend's).
pub const CPU_SMEM_BYTES: usize = 64 * 1024;

#[repr(C, align(16))]
struct Smem([u8; CPU_SMEM_BYTES]);

std::thread_local! {
    static SMEM: core::cell::UnsafeCell<Smem> = const { core::cell::UnsafeCell::new(Smem([0; CPU_SMEM_BYTES])) };
    static SMEM_LEN: Cell<u32> = const { Cell::new(CPU_SMEM_BYTES as u32) };
}

/// How many bytes of this thread's "shared memory" [`dyn_smem_bytes`] reports (at most
/// [`CPU_SMEM_BYTES`]): the CPU backend sets it to a kernel image's scratch bytes per
/// warp, so that tasks see the size they would see on a GPU.
pub fn set_smem_bytes(bytes: u32) {
    SMEM_LEN.with(|l| l.set(bytes.min(CPU_SMEM_BYTES as u32)));
}

/// The CPU backend has no shared memory: its one-lane workers copy a task read from
/// host memory into their own (`resident_device::worker`); never called.
pub(crate) fn warp_stage() -> *mut u8 {
    core::ptr::null_mut()
}

/// This thread's scratch area: a CPU "block" is one thread, so its shared memory is
/// thread-local.
pub fn dyn_smem() -> *mut u8 {
    SMEM.with(|s| s.get() as *mut u8)
}
/// Bytes of this thread's scratch area that tasks may use (see [`set_smem_bytes`]).
pub fn dyn_smem_bytes() -> u32 {
    SMEM_LEN.with(|l| l.get())
}
/// A CPU block is one thread: nothing to wait for.
pub fn sync_block() {}
/// This warp's index within its block: 0.
pub fn block_warp_id() -> u32 {
    0
}
/// Warps in a block: 1.
pub fn block_warps() -> u32 {
    1
}

/// A one-lane warp: the partner of lane 0 is lane 0.
pub fn shfl_xor(v: u32, _mask: u32) -> u32 {
    v
}
/// The one lane's own value (no lane below it).
pub fn shfl_up(v: u32, _delta: u32) -> u32 {
    v
}
/// `a * b + c`, rounded twice (`f32::mul_add` is a slow library call on CPUs built
/// without FMA; the GPU's twin is one `fma.rn`).
#[inline(always)]
pub fn fmaf(a: f32, b: f32, c: f32) -> f32 {
    a * b + c
}
/// Correctly rounded square root.
pub fn sqrt_f64(a: f64) -> f64 {
    a.sqrt()
}

/// Memory that other threads may access at the same time (buffer contents, which
/// racing tasks and the host's copies may touch together), read and written with
/// relaxed atomic accesses: a race gives torn values, as on a GPU, never undefined
/// behaviour. What the CPU backend uses wherever the GPU makes a plain (weak) access to
/// such memory: tasks' element reads and writes ([`ld_racy`], [`st_racy`]) and the
/// host's buffer copies.
///
/// Every access to one element has one width, whoever makes it, so that racing atomic
/// accesses never differ in size (Rust's memory model forbids that): an element of 1,
/// 2, 4 or 8 bytes at an address aligned to its size is one atomic of that size; any
/// other is accessed byte by byte. The width depends only on the element's size and
/// address, which a task's view, another type of the same size viewing the same
/// buffer, and the host's copy of that buffer all share.
pub mod racy {
    use core::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};

    /// Copies `dst.len()` bytes (whole elements of `elem` bytes) from `src` (shared)
    /// into `dst` (private).
    ///
    /// # Safety
    /// `src..src + dst.len()` must be valid for reads and hold elements of `elem`
    /// bytes from `src` on, accessed by others only through this module or atomics of
    /// the element's width.
    #[inline]
    pub unsafe fn load(dst: &mut [u8], src: *const u8, elem: usize) {
        for (i, d) in dst.chunks_mut(elem.max(1)).enumerate() {
            // SAFETY: in bounds (caller's contract); aligned where `width` says so.
            unsafe { load_one(d, src.add(i * elem.max(1))) };
        }
    }

    /// Copies `src` (private; whole elements of `elem` bytes) into `dst` (shared).
    ///
    /// # Safety
    /// As for [`load`], for writes.
    #[inline]
    pub unsafe fn store(dst: *mut u8, src: &[u8], elem: usize) {
        for (i, s) in src.chunks(elem.max(1)).enumerate() {
            // SAFETY: as in `load`.
            unsafe { store_one(dst.add(i * elem.max(1)), s) };
        }
    }

    /// The one atomic width of an element of `size` bytes at `addr` (0: byte by byte).
    #[inline(always)]
    fn width(size: usize, addr: usize) -> usize {
        if matches!(size, 1 | 2 | 4 | 8) && addr.is_multiple_of(size) { size } else { 0 }
    }

    /// One element (`d.len()` bytes) from `p`.
    ///
    /// # Safety
    /// As for [`load`].
    #[inline(always)]
    pub unsafe fn load_one(d: &mut [u8], p: *const u8) {
        // SAFETY (every arm): `p` is valid for `d.len()` bytes and, for a width, aligned
        // to it (`width`).
        unsafe {
            match width(d.len(), p as usize) {
                1 => d[0] = AtomicU8::from_ptr(p as *mut u8).load(Relaxed),
                2 => d.copy_from_slice(&AtomicU16::from_ptr(p as *mut u16).load(Relaxed).to_ne_bytes()),
                4 => d.copy_from_slice(&AtomicU32::from_ptr(p as *mut u32).load(Relaxed).to_ne_bytes()),
                8 => d.copy_from_slice(&AtomicU64::from_ptr(p as *mut u64).load(Relaxed).to_ne_bytes()),
                _ => {
                    for (k, b) in d.iter_mut().enumerate() {
                        *b = AtomicU8::from_ptr(p.add(k) as *mut u8).load(Relaxed);
                    }
                }
            }
        }
    }

    /// One element (`s.len()` bytes) into `p`.
    ///
    /// # Safety
    /// As for [`store`].
    #[inline(always)]
    pub unsafe fn store_one(p: *mut u8, s: &[u8]) {
        // SAFETY: as in `load_one`.
        unsafe {
            match width(s.len(), p as usize) {
                1 => AtomicU8::from_ptr(p).store(s[0], Relaxed),
                2 => AtomicU16::from_ptr(p as *mut u16).store(u16::from_ne_bytes(s.try_into().unwrap()), Relaxed),
                4 => AtomicU32::from_ptr(p as *mut u32).store(u32::from_ne_bytes(s.try_into().unwrap()), Relaxed),
                8 => AtomicU64::from_ptr(p as *mut u64).store(u64::from_ne_bytes(s.try_into().unwrap()), Relaxed),
                _ => {
                    for (k, b) in s.iter().enumerate() {
                        AtomicU8::from_ptr(p.add(k)).store(*b, Relaxed);
                    }
                }
            }
        }
    }
}

/// An element `T` from buffer memory that other tasks (or the host) may write
/// meanwhile: relaxed atomic accesses of the element's one width ([`racy`]); the GPU's
/// is a plain load.
///
/// # Safety
/// `p` must be valid for reads of a `T` (aligned to `T`).
#[inline(always)]
pub unsafe fn ld_racy<T: bytemuck::Pod>(p: *const T) -> T {
    let mut v = T::zeroed();
    unsafe { racy::load_one(bytemuck::bytes_of_mut(&mut v), p as *const u8) };
    v
}

/// Stores an element `T` into buffer memory that other tasks (or the host) may access
/// meanwhile (see [`ld_racy`]).
///
/// # Safety
/// `p` must be valid for writes of a `T` (aligned to `T`).
#[inline(always)]
pub unsafe fn st_racy<T: bytemuck::Pod>(p: *mut T, v: T) {
    unsafe { racy::store_one(p as *mut u8, bytemuck::bytes_of(&v)) }
}

/// Four consecutive `f32` elements (16-byte aligned): four racy element loads here
/// (each element its own width, as every other access to it), one 16-byte load on the
/// GPU.
///
/// # Safety
/// `p` must be valid for reads of four `f32`s.
#[inline(always)]
pub unsafe fn ld_racy_f32x4(p: *const [f32; 4]) -> [f32; 4] {
    let p = p as *const f32;
    unsafe { [ld_racy(p), ld_racy(p.add(1)), ld_racy(p.add(2)), ld_racy(p.add(3))] }
}

/// Stores four consecutive `f32` elements (see [`ld_racy_f32x4`]).
///
/// # Safety
/// `p` must be valid for writes of four `f32`s.
#[inline(always)]
pub unsafe fn st_racy_f32x4(p: *mut [f32; 4], v: [f32; 4]) {
    let p = p as *mut f32;
    for (k, x) in v.into_iter().enumerate() {
        unsafe { st_racy(p.add(k), x) };
    }
}
