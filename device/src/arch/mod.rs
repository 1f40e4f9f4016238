//! The hardware layer: ids, scoped atomics, fences, sleeping, clocks and warp
//! collectives. Two implementations with one set of names: inline PTX for the GPU
//! (`nvptx.rs`) and `core::sync::atomic` plus `std` for the host (`cpu.rs`).
//!
//! Scopes. `.gpu` orders accesses among threads of this GPU; `.sys` also orders them
//! with the host and the copy engines. Every load or store on a host/device handshake
//! uses `.sys`; device-internal counters use `.gpu`. Rust's `AtomicU32` cannot say
//! `.gpu`, and its `fetch_add` loses its ordering on nvptx (LLVM 22 emits a relaxed
//! `atom.add`), so the GPU side is written in PTX by hand.
//!
//! On the CPU a "warp" is one thread with one lane: [`WARP`] is 1, shuffles return their
//! input and votes test the one predicate, so warp-cooperative code runs unchanged.

#[cfg(target_arch = "nvptx64")]
mod nvptx;
#[cfg(target_arch = "nvptx64")]
pub use nvptx::*;

#[cfg(not(target_arch = "nvptx64"))]
mod cpu;
#[cfg(not(target_arch = "nvptx64"))]
pub use cpu::*;
