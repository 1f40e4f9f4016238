//! The host side of resident's custom-task example: the kernel images its build script
//! made from the device crate (`custom-task-device`), and the f64 references the
//! example and its tests check against. Written only against resident's public API.

use resident::{BackendKind, KernelImage, Result, Runtime};

/// The image of the example's tasks plus the built-in ones (`CustomTasks`).
pub fn image() -> KernelImage {
    resident::kernel_image!("custom_tasks")
}

/// The image of two of the example's tasks alone (`CustomOnly`): no built-in tasks.
pub fn image_without_builtins() -> KernelImage {
    resident::kernel_image!("custom_only")
}

/// A runtime running `image` on `backend` (`Auto`: the GPU if there is one and the
/// image has PTX, else the CPU backend, which runs the same task code).
pub fn runtime(image: KernelImage, backend: BackendKind) -> Result<Runtime> {
    Runtime::builder().kernel(image).backend(backend).build()
}

/// The histogram the `Histogram` task computes, in exact integer arithmetic.
pub fn histogram(data: &[u32], bins: usize, shift: u32) -> Vec<u32> {
    let mut h = vec![0u32; bins];
    for &v in data {
        h[((v >> shift) as usize) % bins] += 1;
    }
    h
}

/// The sum of squares of `x` in f64.
pub fn sum_squares(x: &[f32]) -> f64 {
    x.iter().map(|&v| v as f64 * v as f64).sum()
}

/// `c[0] + c[1] x + ... + c[5] x^5` in f64.
pub fn poly(c: &[f32; 6], x: f32) -> f64 {
    c.iter().rev().fold(0.0, |acc, &k| acc * x as f64 + k as f64)
}
