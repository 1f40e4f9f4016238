//! `resident_tree_level` and `resident_tree_grow`: one level of a tree of nodes per
//! ordinary launch, one warp per node, each node marking itself as the `tree` task does
//! (`builtin::tree`: `marks[node] += 1`, one lane, relaxed at `.gpu` scope). What a CUDA
//! programmer writes instead of tasks that spawn their children on the device: one
//! launch per level. The spawn benchmark's rivals (benches/spawn.rs).
//!
//! Numbering as the `tree` task's: child `k` of node `n` is `n * fanout + 1 + k`.
//! - `TreeLevel`: a level of a full tree, whose nodes are consecutive numbers
//!   (`first..first + count`): the host knows every level's size before it launches.
//! - `TreeGrow`: a level of a data-dependent tree (an irregular one:
//!   `irregular_fanout`), given as a list of node ids; each node appends its children's
//!   ids to the next level's list through an atomic counter, which the host reads back
//!   to size the next launch.

use bytemuck::{Pod, Zeroable};
use resident_shared::builtin::irregular_fanout;

use crate::arch;

/// The by-value argument of `resident_tree_level`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct TreeLevelParams {
    /// Device address of the tree's `u32` marks, one per node.
    pub marks: u64,
    /// The level's first node (level `L` of a full tree of fanout `f`:
    /// `(f^L - 1) / (f - 1)`).
    pub first: u32,
    /// Nodes in the level (`f^L`): one warp each (warps past it do nothing).
    pub count: u32,
}

const _: () = assert!(core::mem::size_of::<TreeLevelParams>() == 16);

/// The body for warp `warp` of the grid (every lane calls): marks node
/// `p.first + warp`.
///
/// # Safety
/// `p.marks` must address at least `p.first + p.count` valid `u32`s, written only
/// atomically while the launch runs.
#[inline(always)]
pub unsafe fn level(p: &TreeLevelParams, warp: u32) {
    if warp >= p.count {
        return;
    }
    if arch::lane_id() == 0 {
        let node = p.first.wrapping_add(warp);
        // SAFETY: `node < first + count`, within the marks (the caller's contract);
        // other warps touch them only atomically.
        unsafe { arch::atom_add_relaxed_gpu((p.marks as *mut u32).add(node as usize), 1) };
    }
}

/// The kernel (`resident_tree_level` in the runtime's image): one warp per node of a
/// level of a full tree.
pub struct TreeLevel;

impl crate::DeviceKernel for TreeLevel {
    type Params = TreeLevelParams;
    #[inline(always)]
    unsafe fn run(p: &TreeLevelParams) {
        unsafe { level(p, arch::global_warp_id()) }
    }
}

/// The by-value argument of `resident_tree_grow`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct TreeGrowParams {
    /// Device address of the tree's `u32` marks, one per node of the full tree.
    pub marks: u64,
    /// Device address of this level's `count` node ids (`u32`).
    pub level: u64,
    /// Device address where the next level's node ids go (`next_capacity` `u32`s).
    pub next: u64,
    /// Device address of the next level's `u32` counter, zero before the first launch
    /// that appends to it; after the launch, the next level's size (also when it
    /// exceeds `next_capacity`).
    pub next_count: u64,
    /// Nodes in this level: one warp each (warps past it do nothing).
    pub count: u32,
    /// Children per node (the most per node if `irregular`); the warp writes 32 a pass.
    pub fanout: u32,
    /// 1: node `n` has `irregular_fanout(n, fanout)` children; 0: `fanout`.
    pub irregular: u32,
    /// Levels below this one: 0 appends nothing (`next` and `next_count` unused).
    pub depth_left: u32,
    /// Ids that fit at `next`: those appended past it are counted, not written.
    pub next_capacity: u32,
    /// Fills the struct to 56 bytes; unused.
    pub _pad: u32,
}

const _: () = assert!(core::mem::size_of::<TreeGrowParams>() == 56);

/// The body for warp `warp` of the grid (every lane must call: the warp shuffles):
/// marks node `level[warp]` and, if levels remain below it, appends its children's ids
/// to `next` (one reservation of the counter for the node's children, a lane each).
///
/// # Safety
/// `p.level` must address `p.count` readable `u32` node ids, not written during the
/// launch; `p.marks` must address a `u32` for each of them (and for their children's,
/// read by the next level's launch), written only atomically while the launch runs;
/// if `p.depth_left > 0`, `p.next_count` must address a `u32` counter and `p.next`
/// `p.next_capacity` writable `u32`s, touched by nothing else during the launch.
#[inline(always)]
pub unsafe fn grow(p: &TreeGrowParams, warp: u32) {
    if warp >= p.count {
        return;
    }
    // SAFETY: `warp < count`: one of the level's ids (the caller's contract).
    let n = unsafe { (p.level as *const u32).add(warp as usize).read() };
    let lane = arch::lane_id();
    if lane == 0 {
        // SAFETY: `n` has a mark (the caller's contract), touched only atomically.
        unsafe { arch::atom_add_relaxed_gpu((p.marks as *mut u32).add(n as usize), 1) };
    }
    if p.depth_left == 0 {
        return;
    }
    let children = if p.irregular != 0 { irregular_fanout(n, p.fanout) } else { p.fanout };
    let mut base = 0;
    if lane == 0 {
        // Relaxed, .gpu: the counter only hands out slots; the launch's end publishes
        // the ids to the next launch and to the host's copy.
        // SAFETY: `next_count` addresses the next level's counter (the caller's
        // contract, as `depth_left > 0`), touched only atomically.
        base = unsafe { arch::atom_add_relaxed_gpu(p.next_count as *mut u32, children) };
    }
    // Warp-collective: every lane of the warp reaches it (`warp` and `n` are uniform).
    let base = arch::shfl_idx(base, 0);
    let mut k = lane;
    while k < children {
        let slot = base.wrapping_add(k);
        if slot < p.next_capacity {
            // SAFETY: `slot < next_capacity`: within `next` (the caller's contract),
            // this warp's own slot of the reservation, written by no other.
            unsafe { (p.next as *mut u32).add(slot as usize).write(n.wrapping_mul(p.fanout).wrapping_add(1).wrapping_add(k)) };
        }
        k += arch::WARP;
    }
}

/// The kernel (`resident_tree_grow` in the runtime's image): one warp per node of a
/// level of a data-dependent tree, appending the next level on the device.
pub struct TreeGrow;

impl crate::DeviceKernel for TreeGrow {
    type Params = TreeGrowParams;
    #[inline(always)]
    unsafe fn run(p: &TreeGrowParams) {
        unsafe { grow(p, arch::global_warp_id()) }
    }
}
