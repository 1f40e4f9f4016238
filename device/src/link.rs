//! Pushes into a link's outbox: a task running here hands a follow-up task to another
//! runtime (`resident_shared::link` has the layout; the host's forwarder,
//! `host/multi/link.rs`, is the one consumer).
//!
//! The outbox is a bounded queue after D. Vyukov, many pushers (this runtime's warps)
//! and one popper (the forwarder, a host thread). Its sequence words and slots lie in
//! memory the host reads (mapped pinned memory on CUDA); the pushers' `enqueue`
//! counter lies in device memory, next to the link table, so that no atomic ever
//! crosses the bus. A pusher at position `pos` owns slot `pos % cap` when its sequence
//! word says `pos`; the popper owns it when it says `pos + 1`.
//!
//! Orderings (lane 0 of the pushing warp does all of it):
//! L1. The entry: a weak 16-byte load of the link table, after the acquire that handed
//!     this worker its task (as for buffer entries, `crate::buffers`): the host wrote
//!     the entry before it handed out the `LinkId`, so any task naming it sees it. The
//!     host writes the address once, before the generation, and never clears it (a
//!     dropped link only loses its generation): a torn read gives a null address
//!     (refused) or the right one.
//! L2. Ownership: `atom.relaxed.gpu.add` on `enqueue` (device memory, only this device's
//!     warps touch it) hands this push its position; it never fails and never retries.
//!     (A first version read the slot's sequence word over the bus between its load of
//!     `enqueue` and a compare-and-swap, as the spawn ring does in device memory: with
//!     hundreds of warps pushing, nearly every CAS lost the race and the outbox took
//!     about 3,000 pushes a second, 2 x H200, 2026-11-26.)
//! L3. Room: `ld.acquire.sys` of the slot's sequence word until it says `pos`, which
//!     pairs with the forwarder's release store when it handed the slot back (Rust
//!     `Release`, after its reads of the slot): the host's reads are done before this
//!     push overwrites. The forwarder never stops draining (host/multi/link.rs, F6), so the
//!     wait ends; only an abort of the runtime ends it early (the position stays
//!     unpublished: the link is dead with its runtime).
//! L4. Publication: weak stores of the task into the slot, then `st.release.sys` of the
//!     sequence word `pos + 1`; the forwarder's `Acquire` load of it pairs with that
//!     release, so it reads the whole task.
//! Exactly once: a position has one owner (L2), the forwarder pops positions in order,
//! and it hands each slot back only after it read it (L3).
//!
//! A peer link (`LinkEntry::mask` has `link::PEER`) pushes the same way into an inbox
//! in the other device's memory, reached through peer access (NVLink or PCIe), and the
//! other runtime's relay warp is its one popper (`crate::inbox`, steps I1-I4 there):
//! L2 as above; L3 with the sequence word in the other device's memory (the
//! `ld.acquire.sys` pairs with the relay's `st.release.sys` that handed the slot back),
//! and the inbox's `closed` word read (relaxed, .sys) while waiting: a closed receiver
//! drains no more, so the push fails with `BadLink` instead of waiting for ever; L4
//! with the slot and word stored over the peer mapping (`.sys` covers another GPU).

use resident_shared::link::{self, ENQUEUE_OFFSET, ENQUEUE_STRIDE, InboxHeader, LinkEntry, LinkId, MAX_LINKS, PEER, TABLE_OFFSET};
use resident_shared::{BufferEntry, Status, Task};

use crate::arch;

/// Pushes `task` through `link` (lane 0 only), waiting for room if the outbox is full
/// (`aborting` ends the wait: `Err(Aborted)`). `Err(BadLink)`: no live link of this
/// runtime has that id.
///
/// # Safety
/// `tables` must be this runtime's buffer-table allocation
/// (`resident_shared::link::TABLES_BYTES` bytes).
#[inline(never)]
pub unsafe fn push(tables: *const BufferEntry, id: LinkId, task: &Task, aborting: impl Fn() -> bool) -> Result<(), Status> {
    if id.index as usize >= MAX_LINKS || id.generation == 0 {
        return Err(Status::BadLink);
    }
    let base = tables as *const u8;
    // SAFETY (of the pointer arithmetic and accesses below): `index < MAX_LINKS` keeps
    // the entry and the counter inside the table allocation (the caller's); an entry
    // whose generation matches a live link's names that link's outbox, written once
    // with its mask (the mask shares the generation's word, so they are never torn
    // apart), and outboxes live as long as the runtime: `i <= mask` stays inside it.
    // L1.
    let at = unsafe { base.add(TABLE_OFFSET + id.index as usize * core::mem::size_of::<LinkEntry>()) } as *const u64;
    let (outbox, word) = unsafe { arch::ld_weak_v2_u64(at) };
    let (mask, generation) = (word as u32, (word >> 32) as u32);
    if generation != id.generation || outbox == 0 {
        return Err(Status::BadLink);
    }
    // A peer link's inbox: its header, then the sequence words, then the slots.
    let peer = mask & PEER != 0;
    let mask = mask & !PEER;
    let (closed, seqs, slots) = if peer {
        let base = outbox as *mut u8;
        (unsafe { &raw const (*(base as *const InboxHeader)).closed }, unsafe { base.add(link::INBOX_SEQ_OFFSET) } as *mut u32, unsafe {
            base.add(link::inbox_slots_offset(mask.wrapping_add(1)))
        }
            as *mut Task)
    } else {
        (core::ptr::null(), outbox as *mut u32, unsafe { (outbox as *mut u8).add(link::outbox_slots_offset(mask.wrapping_add(1))) }
            as *mut Task)
    };
    let enqueue = unsafe { base.add(ENQUEUE_OFFSET + id.index as usize * ENQUEUE_STRIDE) } as *mut u32;
    // A closed receiver takes no more (a push that found room would be lost): looked at
    // once before the position is taken, and while waiting for room (L3').
    if peer && unsafe { arch::ld_relaxed_sys(closed) } != 0 {
        return Err(Status::BadLink);
    }
    // L2.
    let pos = unsafe { arch::atom_add_relaxed_gpu(enqueue, 1) };
    let i = pos & mask;
    // L3 (stored relative to the index: zeroed memory is the initial state).
    let mut sleep = 32u32;
    while unsafe { arch::ld_acquire_sys(seqs.add(i as usize)) }.wrapping_add(i) != pos {
        if aborting() {
            return Err(Status::Aborted);
        }
        // Relaxed: flags, nothing is read through them. The receiver's `closed`, and
        // this link's own entry (its generation word in this runtime's table, which the
        // host clears when the receiver closes or faults: a dead receiver's `closed`
        // may never be written). The position stays unpublished: the link is dead.
        if peer {
            let receiver_closed = unsafe { arch::ld_relaxed_sys(closed) } != 0;
            // The entry's generation: its fourth `u32` (`LinkEntry`).
            let entry_gone = unsafe { arch::ld_relaxed_sys((at as *const u32).add(3)) } != generation;
            if receiver_closed || entry_gone {
                return Err(Status::BadLink);
            }
        }
        arch::nanosleep(sleep);
        sleep = (sleep * 2).min(2048);
    }
    unsafe {
        // L4.
        slots.add(i as usize).write(*task);
        arch::st_release_sys(seqs.add(i as usize), pos.wrapping_add(1).wrapping_sub(i));
    }
    Ok(())
}
