//! GPU implementation of [`crate::arch`] in inline PTX and NVVM intrinsics.
//!
//! Inline `asm!` without `nomem` is a compiler barrier, so the compiler neither caches
//! memory in registers across these calls nor moves loads and stores over them; the
//! PTX qualifiers give the hardware ordering. Warp collectives go through LLVM
//! intrinsics, not asm: those are `convergent`, asm is not, and LLVM may otherwise
//! duplicate a shuffle into divergent branches.
#![allow(clippy::missing_safety_doc)]

use core::arch::asm;

/// Lanes in a warp.
pub const WARP: u32 = 32;
const FULL: u32 = 0xffff_ffff;

macro_rules! special_u32 {
    ($name:ident, $reg:literal, $doc:literal) => {
        #[doc = $doc]
        #[inline(always)]
        pub fn $name() -> u32 {
            let v: u32;
            unsafe { asm!(concat!("mov.u32 {0}, ", $reg, ";"), out(reg32) v, options(nomem, nostack, pure)) };
            v
        }
    };
}

special_u32!(lane_id, "%laneid", "This thread's lane within its warp.");
special_u32!(thread_idx, "%tid.x", "Thread index within the block (x).");
special_u32!(block_dim, "%ntid.x", "Threads per block (x).");
special_u32!(block_idx, "%ctaid.x", "Block index (x).");
special_u32!(grid_dim, "%nctaid.x", "Blocks in the grid (x).");
special_u32!(sm_id, "%smid", "The SM this thread runs on (changes only between launches).");

/// Global index of this thread's warp.
#[inline(always)]
pub fn global_warp_id() -> u32 {
    (block_idx() * block_dim() + thread_idx()) / WARP
}

/// Warps in the grid.
#[inline(always)]
pub fn global_warp_count() -> u32 {
    grid_dim() * block_dim() / WARP
}

/// Nanoseconds from the GPU's global timer (`%globaltimer`, about 1 µs resolution on
/// some parts, 32 ns on Hopper).
#[inline(always)]
pub fn globaltimer() -> u64 {
    let v: u64;
    unsafe { asm!("mov.u64 {0}, %globaltimer;", out(reg64) v, options(nostack)) };
    v
}

/// This SM's cycle counter (`%clock64`): for timing steps within one warp.
#[inline(always)]
pub fn clock64() -> u64 {
    let v: u64;
    unsafe { asm!("mov.u64 {0}, %clock64;", out(reg64) v, options(nostack)) };
    v
}

/// Suspends the warp for about `ns` nanoseconds (at most 1 ms; sm_70+).
#[inline(always)]
pub fn nanosleep(ns: u32) {
    unsafe { asm!("nanosleep.u32 {0};", in(reg32) ns, options(nostack)) };
}

/// Asks for the line holding `p` in L1 (and L2); no memory effect, never faults.
#[inline(always)]
pub fn prefetch_l1(p: *const u8) {
    unsafe { asm!("prefetch.global.L1 [{0}];", in(reg64) p, options(nostack, readonly)) };
}

/// Load with acquire semantics at system scope: pairs with a release by the host or
/// by a copy engine (stream memory operations).
#[inline(always)]
pub unsafe fn ld_acquire_sys(p: *const u32) -> u32 {
    let v: u32;
    unsafe { asm!("ld.acquire.sys.u32 {0}, [{1}];", out(reg32) v, in(reg64) p, options(nostack)) };
    v
}

/// Load with acquire semantics at GPU scope: pairs with a release by another thread of
/// this GPU.
#[inline(always)]
pub unsafe fn ld_acquire_gpu(p: *const u32) -> u32 {
    let v: u32;
    unsafe { asm!("ld.acquire.gpu.u32 {0}, [{1}];", out(reg32) v, in(reg64) p, options(nostack)) };
    v
}

/// Strong relaxed load at system scope: sees a value the host or a copy engine wrote,
/// with no ordering (pair it with a fence for an acquire pattern).
#[inline(always)]
pub unsafe fn ld_relaxed_sys(p: *const u32) -> u32 {
    let v: u32;
    unsafe { asm!("ld.relaxed.sys.u32 {0}, [{1}];", out(reg32) v, in(reg64) p, options(nostack)) };
    v
}

/// Strong relaxed load at GPU scope (no ordering, but never torn nor cached stale).
#[inline(always)]
pub unsafe fn ld_relaxed_gpu(p: *const u32) -> u32 {
    let v: u32;
    unsafe { asm!("ld.relaxed.gpu.u32 {0}, [{1}];", out(reg32) v, in(reg64) p, options(nostack)) };
    v
}

/// Store with release semantics at GPU scope.
#[inline(always)]
pub unsafe fn st_release_gpu(p: *mut u32, v: u32) {
    unsafe { asm!("st.release.gpu.u32 [{0}], {1};", in(reg64) p, in(reg32) v, options(nostack)) };
}

/// Strong relaxed store at GPU scope.
#[inline(always)]
pub unsafe fn st_relaxed_gpu(p: *mut u32, v: u32) {
    unsafe { asm!("st.relaxed.gpu.u32 [{0}], {1};", in(reg64) p, in(reg32) v, options(nostack)) };
}

/// Store with release semantics at system scope: a host thread's acquire load of the
/// same word (mapped pinned memory) then sees every earlier store of this thread.
#[inline(always)]
pub unsafe fn st_release_sys(p: *mut u32, v: u32) {
    unsafe { asm!("st.release.sys.u32 [{0}], {1};", in(reg64) p, in(reg32) v, options(nostack)) };
}

/// Strong relaxed store at system scope. After [`fence_acq_rel_sys`] it completes a
/// release pattern that the host's acquire load pairs with.
#[inline(always)]
pub unsafe fn st_relaxed_sys(p: *mut u32, v: u32) {
    unsafe { asm!("st.relaxed.sys.u32 [{0}], {1};", in(reg64) p, in(reg32) v, options(nostack)) };
}

/// Atomic add, relaxed, GPU scope; returns the previous value.
#[inline(always)]
pub unsafe fn atom_add_relaxed_gpu(p: *mut u32, v: u32) -> u32 {
    let old: u32;
    unsafe { asm!("atom.relaxed.gpu.add.u32 {0}, [{1}], {2};", out(reg32) old, in(reg64) p, in(reg32) v, options(nostack)) };
    old
}

/// Atomic add of an `f32`, relaxed, GPU scope; returns the previous value.
#[inline(always)]
pub unsafe fn atom_add_relaxed_gpu_f32(p: *mut f32, v: f32) -> f32 {
    let old: f32;
    unsafe { asm!("atom.relaxed.gpu.add.f32 {0}, [{1}], {2};", out(reg32) old, in(reg64) p, in(reg32) v, options(nostack)) };
    old
}

/// 64-bit load with acquire semantics at system scope.
#[inline(always)]
pub unsafe fn ld_acquire_sys_u64(p: *const u64) -> u64 {
    let v: u64;
    unsafe { asm!("ld.acquire.sys.u64 {0}, [{1}];", out(reg64) v, in(reg64) p, options(nostack)) };
    v
}

/// 64-bit strong relaxed load at GPU scope.
#[inline(always)]
pub unsafe fn ld_relaxed_gpu_u64(p: *const u64) -> u64 {
    let v: u64;
    unsafe { asm!("ld.relaxed.gpu.u64 {0}, [{1}];", out(reg64) v, in(reg64) p, options(nostack)) };
    v
}

/// 16 bytes (two u64) in one weak (plain) global load: `ld.global.v2.u64`, which may
/// hit in L1. For data that an earlier acquire in this thread already ordered (the
/// buffer table, written before any task naming the entry was published); asm, so the
/// compiler never hoists it out of a loop or reuses an earlier value. `p` must be a
/// 16-byte-aligned address of global memory.
#[inline(always)]
pub unsafe fn ld_weak_v2_u64(p: *const u64) -> (u64, u64) {
    let (a, b): (u64, u64);
    unsafe { asm!("ld.global.v2.u64 {{{0}, {1}}}, [{2}];", out(reg64) a, out(reg64) b, in(reg64) p, options(nostack, readonly)) };
    (a, b)
}

/// 64-bit strong relaxed load at system scope.
#[inline(always)]
pub unsafe fn ld_relaxed_sys_u64(p: *const u64) -> u64 {
    let v: u64;
    unsafe { asm!("ld.relaxed.sys.u64 {0}, [{1}];", out(reg64) v, in(reg64) p, options(nostack)) };
    v
}

/// 64-bit strong relaxed store at system scope.
#[inline(always)]
pub unsafe fn st_relaxed_sys_u64(p: *mut u64, v: u64) {
    unsafe { asm!("st.relaxed.sys.u64 [{0}], {1};", in(reg64) p, in(reg64) v, options(nostack)) };
}

/// 64-bit store with release semantics at system scope: the host's acquire load of the
/// same word then sees every earlier load and store of this thread as done.
#[inline(always)]
pub unsafe fn st_release_sys_u64(p: *mut u64, v: u64) {
    unsafe { asm!("st.release.sys.u64 [{0}], {1};", in(reg64) p, in(reg64) v, options(nostack)) };
}

/// Atomic compare-and-swap, relaxed, GPU scope; returns the previous value (the swap
/// happened iff it equals `expected`).
#[inline(always)]
pub unsafe fn atom_cas_relaxed_gpu(p: *mut u32, expected: u32, new: u32) -> u32 {
    let old: u32;
    unsafe {
        asm!("atom.relaxed.gpu.cas.b32 {0}, [{1}], {2}, {3};", out(reg32) old, in(reg64) p, in(reg32) expected, in(reg32) new, options(nostack))
    };
    old
}

/// Atomic add, acquire-release, GPU scope; returns the previous value.
#[inline(always)]
pub unsafe fn atom_add_acq_rel_gpu(p: *mut u32, v: u32) -> u32 {
    let old: u32;
    unsafe { asm!("atom.acq_rel.gpu.add.u32 {0}, [{1}], {2};", out(reg32) old, in(reg64) p, in(reg32) v, options(nostack)) };
    old
}

/// 64-bit atomic add, acquire-release, GPU scope; returns the previous value.
#[inline(always)]
pub unsafe fn atom_add_acq_rel_gpu_u64(p: *mut u64, v: u64) -> u64 {
    let old: u64;
    unsafe { asm!("atom.acq_rel.gpu.add.u64 {0}, [{1}], {2};", out(reg64) old, in(reg64) p, in(reg64) v, options(nostack)) };
    old
}

/// 64-bit atomic add, release, GPU scope; returns the previous value.
#[inline(always)]
pub unsafe fn atom_add_release_gpu_u64(p: *mut u64, v: u64) -> u64 {
    let old: u64;
    unsafe { asm!("atom.release.gpu.add.u64 {0}, [{1}], {2};", out(reg64) old, in(reg64) p, in(reg64) v, options(nostack)) };
    old
}

/// 64-bit atomic add, relaxed, GPU scope; returns the previous value.
#[inline(always)]
pub unsafe fn atom_add_relaxed_gpu_u64(p: *mut u64, v: u64) -> u64 {
    let old: u64;
    unsafe { asm!("atom.relaxed.gpu.add.u64 {0}, [{1}], {2};", out(reg64) old, in(reg64) p, in(reg64) v, options(nostack)) };
    old
}

/// 64-bit strong relaxed store at GPU scope.
#[inline(always)]
pub unsafe fn st_relaxed_gpu_u64(p: *mut u64, v: u64) {
    unsafe { asm!("st.relaxed.gpu.u64 [{0}], {1};", in(reg64) p, in(reg64) v, options(nostack)) };
}

/// Fence, acquire-release, system scope (`MEMBAR.SYS`: costly; batch work under one).
#[inline(always)]
pub fn fence_acq_rel_sys() {
    unsafe { asm!("fence.acq_rel.sys;", options(nostack)) };
}

/// Fence, acquire-release, GPU scope.
#[inline(always)]
pub fn fence_acq_rel_gpu() {
    unsafe { asm!("fence.acq_rel.gpu;", options(nostack)) };
}

/// Aborts the kernel (the launch fails with an illegal-instruction error).
#[inline(always)]
pub fn trap() -> ! {
    unsafe { asm!("trap;", options(noreturn, nostack)) };
}

/// A store to a global address nobody checked: the fault-injection task's wild store
/// (an unmapped address kills the kernel with an illegal-address error).
#[inline(always)]
pub unsafe fn store_forged(p: *mut u32, v: u32) {
    unsafe { asm!("st.volatile.global.u32 [{0}], {1};", in(reg64) p, in(reg32) v, options(nostack)) };
}

unsafe extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn llvm_shfl_sync_idx_i32(mask: u32, val: u32, src_lane: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn llvm_vote_ballot_sync(mask: u32, pred: bool) -> u32;
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn llvm_bar_warp_sync(mask: u32);
}

/// Value of `v` in lane `src` (all lanes must call).
#[inline(always)]
pub fn shfl_idx(v: u32, src: u32) -> u32 {
    unsafe { llvm_shfl_sync_idx_i32(FULL, v, src, 0x1f) }
}

/// Bit `i` set where lane `i`'s predicate holds (all lanes must call).
#[inline(always)]
pub fn ballot(pred: bool) -> u32 {
    unsafe { llvm_vote_ballot_sync(FULL, pred) }
}

/// The predicate holds in every lane (all lanes must call).
#[inline(always)]
pub fn all_lanes(pred: bool) -> bool {
    ballot(pred) == FULL
}

/// Warp barrier; also orders memory among the warp's lanes (`bar.warp.sync`).
#[inline(always)]
pub fn syncwarp() {
    unsafe { llvm_bar_warp_sync(FULL) }
}

// Dynamic shared memory: one extern array, sized at launch. `#[link_section = ".shared"]`
// does not work with rustc's nvptx backend (the static lands in .global), so the array
// is declared in PTX and its generic address taken with `cvta` (verified on an H100).
core::arch::global_asm!(".extern .shared .align 16 .b8 RESIDENT_DYN_SMEM[];");

/// Generic address of this block's dynamic shared memory (16-byte aligned; as many
/// bytes as the launch gave: [`dyn_smem_bytes`]).
#[inline(always)]
pub fn dyn_smem() -> *mut u8 {
    let p: u64;
    unsafe { asm!("cvta.shared.u64 {0}, RESIDENT_DYN_SMEM;", out(reg64) p, options(nomem, nostack, pure)) };
    p as *mut u8
}

/// Bytes of dynamic shared memory this block was launched with (`%dynamic_smem_size`).
#[inline(always)]
pub fn dyn_smem_bytes() -> u32 {
    let v: u32;
    unsafe { asm!("mov.u32 {0}, %dynamic_smem_size;", out(reg32) v, options(nomem, nostack, pure)) };
    v
}

// Each warp's stage for a task read from host memory (`resident_device::worker`): 64
// bytes a warp, for blocks of up to 1024 threads, in static shared memory (declared in
// PTX, as the dynamic array above). One copy a warp, where each lane kept its own in
// local memory before: the persistent loop's stack frame went from 272 to 192 bytes a
// thread, and the pipelined host-fed 20k axpy batch from 108-111 to 101-104 µs (H200,
// 2026-11-29, one lease; the noop batches and the round trip unchanged).
core::arch::global_asm!(".shared .align 16 .b8 RESIDENT_STAGE[{bytes}];", bytes = const STAGE_BYTES * MAX_BLOCK_WARPS);

/// Bytes of a warp's stage ([`warp_stage`]).
const STAGE_BYTES: usize = 64;

/// Warps in the largest block (1024 threads).
const MAX_BLOCK_WARPS: usize = 32;

/// Generic address of this warp's 64-byte stage in static shared memory (its block's
/// `threadIdx.x / 32`th). The runtime's own: task code never gets it.
#[inline(always)]
pub(crate) fn warp_stage() -> *mut u8 {
    let p: u64;
    unsafe { asm!("cvta.shared.u64 {0}, RESIDENT_STAGE;", out(reg64) p, options(nomem, nostack, pure)) };
    (p as *mut u8).wrapping_add((thread_idx() / WARP) as usize * STAGE_BYTES)
}

/// Block barrier (`bar.sync 0`): every thread of the block must call; orders shared and
/// global memory among the block's threads.
#[inline(always)]
pub fn sync_block() {
    unsafe { core::arch::nvptx::_syncthreads() }
}

/// This warp's index within its block.
#[inline(always)]
pub fn block_warp_id() -> u32 {
    thread_idx() / WARP
}
/// Warps in this block.
#[inline(always)]
pub fn block_warps() -> u32 {
    block_dim() / WARP
}

// Arithmetic the fused-op examples need (`crate::nn`): `core` has no `sqrt` or `fma` on
// nvptx, so they go through LLVM intrinsics (`sqrt.rn`, `fma.rn`: correctly rounded).
unsafe extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn llvm_shfl_sync_bfly_i32(mask: u32, val: u32, lane_mask: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn llvm_shfl_sync_up_i32(mask: u32, val: u32, delta: u32, clamp: u32) -> u32;
    #[link_name = "llvm.fma.f32"]
    fn llvm_fma_f32(a: f32, b: f32, c: f32) -> f32;
    #[link_name = "llvm.sqrt.f64"]
    fn llvm_sqrt_f64(a: f64) -> f64;
}

/// Value of `v` in lane `lane_id() ^ mask` (butterfly; all lanes must call).
#[inline(always)]
pub fn shfl_xor(v: u32, mask: u32) -> u32 {
    unsafe { llvm_shfl_sync_bfly_i32(FULL, v, mask, 0x1f) }
}

/// Value of `v` in lane `lane_id() - delta`, or this lane's own where that is below
/// lane 0 (all lanes must call): the step of a scan.
#[inline(always)]
pub fn shfl_up(v: u32, delta: u32) -> u32 {
    unsafe { llvm_shfl_sync_up_i32(FULL, v, delta, 0) }
}

/// `a * b + c` with one rounding (`fma.rn.f32`). The CPU twin rounds twice.
#[inline(always)]
pub fn fmaf(a: f32, b: f32, c: f32) -> f32 {
    unsafe { llvm_fma_f32(a, b, c) }
}

/// Correctly rounded square root.
#[inline(always)]
pub fn sqrt_f64(a: f64) -> f64 {
    unsafe { llvm_sqrt_f64(a) }
}

/// A `T` from buffer memory that other tasks (or the host) may write meanwhile: a plain
/// (weak) load, whose race gives an undefined value (the PTX memory model), no more.
/// The CPU twin uses relaxed atomics, where a plain racing load would be undefined
/// behaviour.
///
/// # Safety
/// `p` must be valid for reads of a `T` (aligned to `T`).
#[inline(always)]
pub unsafe fn ld_racy<T: bytemuck::Pod>(p: *const T) -> T {
    unsafe { p.read() }
}

/// Stores a `T` into buffer memory that other tasks may access meanwhile: a plain
/// (weak) store (see [`ld_racy`]).
///
/// # Safety
/// `p` must be valid for writes of a `T` (aligned to `T`).
#[inline(always)]
pub unsafe fn st_racy<T: bytemuck::Pod>(p: *mut T, v: T) {
    unsafe { p.write(v) }
}

/// Four consecutive `f32` elements, 16-byte aligned: one 16-byte load (see
/// [`ld_racy`]).
///
/// # Safety
/// `p` must be valid for reads of four `f32`s, aligned to 16.
#[inline(always)]
pub unsafe fn ld_racy_f32x4(p: *const [f32; 4]) -> [f32; 4] {
    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    struct F4([f32; 4]);
    unsafe { (p as *const F4).read().0 }
}

/// Stores four consecutive `f32` elements, 16-byte aligned: one 16-byte store.
///
/// # Safety
/// `p` must be valid for writes of four `f32`s, aligned to 16.
#[inline(always)]
pub unsafe fn st_racy_f32x4(p: *mut [f32; 4], v: [f32; 4]) {
    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    struct F4([f32; 4]);
    unsafe { (p as *mut F4).write(F4(v)) }
}
