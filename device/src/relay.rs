//! The relay: one warp (kernel `resident_relay`, beside the persistent kernel) that
//! moves small host batches into the ring without a driver call on the host. The host writes the tasks into its staging mirror of the ring
//! (mapped pinned memory), then stores the new end in the mailbox; the relay sees it,
//! copies the slots into the ring in device memory, and publishes `tail` for the
//! workers. Large batches still go by copy on the transfer stream (a DMA moves them
//! faster than one warp reading over PCIe); the host never lets the two overlap
//! (`host/cuda/relay.rs`).
//!
//! Orderings:
//! 1. Host: plain stores of the slots into staging, then a release store of
//!    `mailbox.host_tail` (x86: program order, with a compiler fence).
//! 2. Relay, every lane: `ld.acquire.sys` of `host_tail` (pairs with 1: the staged
//!    slots, and `host_from`, are visible), then `host_from`. It copies from the later
//!    of `host_from` and its own progress: slots before `host_from` came by copy, and
//!    the host wrote `host_from` only after seeing those copies complete. Both are
//!    64-bit and never wrap, so any number of copy publications in between is fine.
//! 3. Relay: weak 16-byte loads from staging, weak stores into the ring; `bar.warp.sync`
//!    (the lanes' stores happen before lane 0's next operations); lane 0 stores `tail`
//!    with `st.release.gpu`, which the workers' `ld.acquire.sys` of `tail` pairs with
//!    (device/src/queue.rs, step 2): release is cumulative, so they see every lane's
//!    stores.
//! 4. Lane 0 stores `mailbox.relayed` (`st.relaxed.sys` after a `fence.acq_rel.sys`),
//!    which the host reads before it publishes by copy.
//! 5. The relay leaves when the terminate sentinel has run (`stop`, which it relayed or
//!    which came by copy after it caught up) or on abort.

use resident_shared::relay::RelayMailbox;
use resident_shared::{KernelParams, QueueHeader, Task};

use crate::arch;

/// 16 bytes: a quarter of a task, one vector load per lane.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Quad([u32; 4]);

/// Longest sleep between two polls of the mailbox. A poll is a read over PCIe (about a
/// microsecond), so the sleep adds little to the latency.
const MAX_SLEEP_NS: u32 = 128;

/// Loads in flight per lane while copying.
const UNROLL: u32 = 2;

/// Runs the relay on the calling warp until shutdown.
///
/// # Safety
/// `p` must describe a live queue whose `relay` and `staging` are mapped pinned memory.
#[inline(always)]
pub unsafe fn relay_loop(p: &KernelParams) {
    let mailbox = p.relay as *mut RelayMailbox;
    let header = p.header as *mut QueueHeader;
    let staging = p.staging as *const Quad;
    let ring = p.ring as *mut Quad;
    let mask = p.capacity - 1;
    let lane = arch::lane_id();
    let mut copied = 0u64;
    let mut sleep = 0u32;
    loop {
        // Step 2.
        let host_tail = unsafe { arch::ld_acquire_sys_u64(&raw const (*mailbox).host_tail) };
        if host_tail != copied {
            let host_from = unsafe { arch::ld_relaxed_sys_u64(&raw const (*mailbox).host_from) };
            let from = copied.max(host_from);
            // Step 3: four quads per task, one per lane, four in flight per lane (a read
            // of pinned memory is a PCIe round trip: overlap them).
            let quads = (host_tail - from) as u32 * 4;
            let quad = |q: u32| (((from as u32).wrapping_add(q / 4) & mask) * 4 + q % 4) as usize;
            let mut q = lane;
            while q < quads {
                let mut v = [Quad([0; 4]); UNROLL as usize];
                for (u, v) in v.iter_mut().enumerate() {
                    let k = q + u as u32 * arch::WARP;
                    if k < quads {
                        *v = unsafe { staging.add(quad(k)).read() };
                    }
                }
                for (u, v) in v.iter().enumerate() {
                    let k = q + u as u32 * arch::WARP;
                    if k < quads {
                        unsafe { ring.add(quad(k)).write(*v) };
                    }
                }
                q += UNROLL * arch::WARP;
            }
            arch::syncwarp();
            if lane == 0 {
                unsafe {
                    arch::st_release_gpu(&raw mut (*header).tail.value, host_tail as u32);
                    // Step 4.
                    arch::fence_acq_rel_sys();
                    arch::st_relaxed_sys_u64(&raw mut (*mailbox).relayed, host_tail);
                }
            }
            copied = host_tail;
            sleep = 0;
            continue;
        }
        // Step 5.
        if unsafe { arch::ld_acquire_sys(&raw const (*header).abort.value) } != 0
            || unsafe { arch::ld_acquire_gpu(&raw const (*header).stop.value) } != 0
        {
            return;
        }
        arch::nanosleep(sleep);
        sleep = (sleep * 2).clamp(32, MAX_SLEEP_NS);
    }
}

const _: () = assert!(core::mem::size_of::<Task>() == 4 * core::mem::size_of::<Quad>());
