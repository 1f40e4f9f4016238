//! `resident_pipeline`: an elementwise map `out[i] = f(in[i])` whose cost per element is
//! tunable (`iters` dependent multiply-adds), so that the kernel's time can be balanced
//! against the copies in the overlap example (`examples/overlap.rs`).

use bytemuck::{Pod, Zeroable};

/// The kernel's one by-value argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct PipelineParams {
    /// Device address of `len` input `f32`s.
    pub input: u64,
    /// Device address of `len` output `f32`s (may equal `input`: each element is read
    /// once, then written, by the same thread).
    pub output: u64,
    /// Number of elements.
    pub len: u64,
    /// Dependent multiply-adds per element: 0 copies the input.
    pub iters: u32,
    /// Fills the struct to 32 bytes; unused.
    pub _pad: u32,
}

const _: () = assert!(core::mem::size_of::<PipelineParams>() == 32);

/// What the kernel computes for one element. The map contracts towards 1.0, so any
/// `iters` keeps values finite. Written as separate multiply and add (Rust never fuses
/// them), so the host's result matches the GPU's to the last bit unless the PTX
/// assembler fuses them; the tests compare with a tolerance all the same.
#[inline(always)]
pub fn element(x: f32, iters: u32) -> f32 {
    let mut v = x;
    let mut k = 0;
    while k < iters {
        v = v * 0.999 + 0.001;
        k += 1;
    }
    v
}

/// The body for the thread whose grid-wide index is `first`, striding by `stride`
/// (the grid's thread count).
///
/// # Safety
/// `p.input` and `p.output` must be valid for `p.len` `f32`s, and no other thread may
/// write the elements this thread handles while it runs.
#[inline(always)]
pub unsafe fn run(p: &PipelineParams, first: u64, stride: u64) {
    let input = p.input as *const f32;
    let output = p.output as *mut f32;
    let mut i = first;
    while i < p.len {
        // SAFETY: i < len, by the caller's promise both addresses are valid.
        unsafe { *output.add(i as usize) = element(*input.add(i as usize), p.iters) };
        i += stride;
    }
}

/// The kernel (`resident_pipeline` in the runtime's image): any grid; each thread
/// strides over the array.
pub struct Pipeline;

impl crate::DeviceKernel for Pipeline {
    type Params = PipelineParams;
    #[inline(always)]
    unsafe fn run(p: &PipelineParams) {
        use crate::arch;
        let first = arch::block_idx() as u64 * arch::block_dim() as u64 + arch::thread_idx() as u64;
        let stride = arch::grid_dim() as u64 * arch::block_dim() as u64;
        unsafe { run(p, first, stride) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_is_identity_at_zero_iters_and_contracts() {
        assert_eq!(element(3.5, 0), 3.5);
        let far = element(100.0, 10_000);
        assert!((far - 1.0).abs() < 1e-2, "{far}");
    }

    #[test]
    fn run_covers_every_element_with_any_stride() {
        let input: [f32; 37] = core::array::from_fn(|i| i as f32);
        for stride in [1u64, 4, 64] {
            let mut out = [0f32; 37];
            let p = PipelineParams { input: input.as_ptr() as u64, output: out.as_mut_ptr() as u64, len: 37, iters: 3, _pad: 0 };
            for first in 0..stride {
                unsafe { run(&p, first, stride) };
            }
            for (i, o) in out.iter().enumerate() {
                assert_eq!(*o, element(i as f32, 3));
            }
        }
    }
}
