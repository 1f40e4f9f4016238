//! Math for task code: `#![no_std]` has no `f32::exp`, `sin`, `powf`, ... (they live in
//! `std`), so the device crate re-exports [`libm`], a port of musl's libm in pure Rust,
//! which builds for `nvptx64` and for the host: the GPU and the CPU backend compute the
//! same results. `f32` functions end in `f` (`expf`, `logf`, `tanhf`, `powf`,
//! `sqrtf`, `erff`, ...), `f64` ones do not (`exp`, `log`, ...).
//!
//! ```
//! use resident_device::math;
//! let y = math::expf(1.0) * math::tanhf(0.5);
//! assert!((y - core::f32::consts::E * 0.462_117_2).abs() < 1e-5);
//! ```
//!
//! They are correctly rounded or close to it, not the GPU's fastest: for a hot loop,
//! [`crate::arch::fmaf`] and [`crate::arch::sqrt_f64`] are single instructions.

pub use libm::*;
