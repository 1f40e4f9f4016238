//! A device crate of a user's own, as docs/custom-tasks.md builds it step by step: task
//! types written against `resident-device` alone, in a `#![no_std]` crate that compiles
//! for the GPU (PTX, through the host crate's build script) and for the host (the CPU
//! backend runs the very same code).
//!
//! - [`Histogram`]: `bins[(x >> shift) % bins.len] += 1` over a slice, counted first in
//!   the warp's scratch shared memory, then added to the buffer with atomics;
//! - [`HistogramSplit`]: cuts a large slice into chunks and pushes a [`Histogram`] task
//!   for each, on the device;
//! - [`SumSquares`] and [`Total`]: a reduction across tasks: each `SumSquares` writes the
//!   sum of squares of its slice into one partial and signals a counter; `Total` waits
//!   for the counter and adds the partials up; [`SumSplit`] does the split on the
//!   device, pushing a [`SumPart`] a partial, each of which signals the counter from its
//!   body;
//! - [`Poly`]: `y = c0 + c1 x + ... + c5 x^5`, whose arguments take the whole 48 bytes a
//!   task has;
//! - [`Softmax`] and [`Compact`]: the task author's toolbox: warp maxima, sums and scans,
//!   `resident_device::math`, and an inline result of an `[f32; 2]`.
#![no_std]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

mod histogram;
mod poly;
mod sum;
mod warp_ops;

pub use histogram::{Histogram, HistogramSplit, MAX_CHILDREN};
pub use poly::Poly;
pub use sum::{SumPart, SumSplit, SumSquares, Total};
pub use warp_ops::{Compact, Softmax};

use resident_device::Builtins;

resident_device::task_set! {
    /// The example's tasks and the built-in ones.
    pub struct CustomTasks: Builtins { Histogram, HistogramSplit, SumSquares, Total, Poly, SumSplit, SumPart, Softmax, Compact }
}

resident_device::task_set! {
    /// Two of the example's tasks and nothing else: a set without the built-in tasks.
    pub struct CustomOnly { Histogram, SumSquares }
}
