//! The built-in kernel image as the driver sees it on each device.

use crate::out;
use resident::KernelImage;
use resident::stream::Device;

/// The persistent kernel's entry point.
const PERSISTENT: &str = "resident_persistent";

/// Prints, for the first device, every kernel of the built-in image: registers, local
/// memory per thread (stack frame and spills) and static shared memory, and for the
/// persistent kernel how many of its blocks fit an SM. A count of problems: an image
/// without PTX on a machine with a GPU, a module that does not load.
pub fn report() -> u32 {
    let image = KernelImage::builtin();
    out!("kernel image `{}`:", image.name());
    if !image.has_ptx() {
        if resident::device_count() > 0 {
            out!("  built without PTX, on a machine with a GPU: rebuild with the components above");
            return 1;
        }
        out!("  built without PTX (no GPU here: the CPU backend runs its tasks)");
        return 0;
    }
    if resident::device_count() == 0 {
        out!("  carries PTX; no GPU here to load it");
        return 0;
    }
    let module = match Device::new(0).and_then(|d| d.load(&image)) {
        Ok(m) => m,
        Err(e) => {
            out!("  does not load on device 0: {e}");
            return 1;
        }
    };
    let threads = image.block_threads();
    for name in std::iter::once(PERSISTENT).chain(image.kernels()) {
        match module.kernel_info(name, threads) {
            Ok(Some(k)) => {
                let blocks = if name == PERSISTENT {
                    format!(", {} blocks of {threads} threads per SM (the runtime leaves one free)", k.blocks_per_sm)
                } else {
                    String::new()
                };
                out!(
                    "  {name:<24} {:>3} registers, {:>4} B local, {:>5} B static shared{blocks}",
                    k.registers,
                    k.local_bytes,
                    k.static_shared_bytes
                );
            }
            Ok(None) => out!("  {name}: (CPU device)"),
            Err(e) => out!("  {name}: {e}"),
        }
    }
    0
}
