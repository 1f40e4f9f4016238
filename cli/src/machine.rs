//! The machine as the runtime sees it: driver, devices, the backend a runtime picks.

use crate::out;
use resident::stream::Device;
use resident::{BackendKind, Runtime};

/// Prints the driver, the devices and the backend a default runtime picks; the count of
/// problems found (a driver whose devices cannot be used, a runtime that fails to start,
/// a GPU left to the CPU backend).
pub fn report() -> u32 {
    let mut problems = 0;
    out!("driver:");
    match resident::cuda_driver_version() {
        Some((major, minor)) => out!("  NVIDIA driver, CUDA {major}.{minor}"),
        None => out!("  no NVIDIA driver (libcuda) here: the CPU backend runs everything"),
    }
    let count = resident::device_count();
    out!("devices: {count}");
    for ordinal in 0..count {
        match Device::new(ordinal) {
            Ok(d) => {
                let memory = d.memory_info().map_or("?".into(), |(free, total)| format!("{} of {} MiB free", free >> 20, total >> 20));
                out!("  {ordinal}: {}, {} SMs, {memory}", d.name(), d.sm_count());
            }
            Err(e) => {
                problems += 1;
                out!("  {ordinal}: cannot be opened: {e}");
            }
        }
    }
    out!("backend (RuntimeConfig::default, the built-in image):");
    match Runtime::new() {
        Ok(rt) => {
            let info = rt.backend();
            out!("  {info}");
            out!("  queue ring: {} slots; {} workers", info.capacity, info.workers);
            if info.kind == BackendKind::Cpu && count > 0 {
                problems += 1;
                out!("  a GPU is here but the CPU backend runs: {}", info.fallback.as_deref().unwrap_or("see the line above"));
            }
            if let Err(e) = rt.shutdown() {
                out!("  shutdown: {e}");
            }
        }
        Err(e) => {
            problems += 1;
            out!("  a runtime does not start here: {e}");
        }
    }
    problems
}
