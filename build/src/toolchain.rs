//! Whether the device toolchain is there, and what to do when it is not.
//!
//! The device build needs three rustup components of the active toolchain: `rust-src`
//! (for `-Zbuild-std=core`), `llvm-tools` (`llvm-link`, `opt`, `llc`) and
//! `llvm-bitcode-linker`. A fresh toolchain may lack them. Then:
//! - `RESIDENT_NO_PTX=1` (set on purpose): no PTX, one warning line, no error;
//! - a machine with an NVIDIA driver: the build fails, naming the `rustup component add`
//!   line that fixes it (a CPU-only binary there would quietly ignore the GPU);
//! - no driver: a warning naming the same line, and an image without PTX (the CPU
//!   backend runs it; the runtime says so if it ever meets a GPU).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Set to `1` to make the build act as on a machine with an NVIDIA driver (to try the
/// failure path on a machine without one).
pub const ASSUME_DRIVER: &str = "RESIDENT_BUILD_ASSUME_DRIVER";

/// What the build does about PTX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Compile the device code.
    Build,
    /// Write an image without PTX (the CPU backend runs it).
    NoPtx,
}

/// Decides, printing the warning or failing the build as the module docs say.
pub fn decide() -> Decision {
    if std::env::var("RESIDENT_NO_PTX").is_ok_and(|v| !v.is_empty() && v != "0") {
        println!("cargo:warning=resident: RESIDENT_NO_PTX is set: building without PTX (CPU backend only)");
        return Decision::NoPtx;
    }
    let missing = missing_components();
    if missing.is_empty() {
        return Decision::Build;
    }
    let fix = format!("rustup component add {} --toolchain {}", missing.join(" "), toolchain_name());
    if let Some(why) = driver_present() {
        panic!(
            "\n\nresident: this machine has an NVIDIA driver ({why}), but the Rust toolchain lacks the components \
             that compile device code to PTX: {}.\nFix:\n\n    {fix}\n\nthen build again. (To build for the CPU backend \
             only, on purpose: RESIDENT_NO_PTX=1.)\n\n",
            missing.join(", ")
        );
    }
    println!(
        "cargo:warning=resident: no PTX built: the Rust toolchain lacks {} (no NVIDIA driver here, so the CPU backend \
         will run). For GPUs: {fix}",
        missing.join(", ")
    );
    Decision::NoPtx
}

/// The rustup components the device build needs that this toolchain lacks.
///
/// Each checked path is also named in `rerun-if-changed`: a path that does not exist
/// makes cargo rerun the build script on every build, so installing the component is
/// seen at the next build, not only after `cargo clean`.
pub fn missing_components() -> Vec<&'static str> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let Some(sysroot) = sysroot else { return vec!["rust-src", "llvm-tools", "llvm-bitcode-linker"] };
    let rustlib = sysroot.join("lib/rustlib");
    let host = std::env::var("HOST").unwrap_or_else(|_| "x86_64-unknown-linux-gnu".into());
    let mut missing = vec![];
    let core_src = rustlib.join("src/rust/library/core/Cargo.toml");
    println!("cargo:rerun-if-changed={}", core_src.display());
    if !core_src.exists() {
        missing.push("rust-src");
    }
    let bin = rustlib.join(&host).join("bin");
    for tool in ["self-contained/llvm-bitcode-linker", "llc"] {
        println!("cargo:rerun-if-changed={}", bin.join(tool).display());
    }
    if !bin.join("self-contained/llvm-bitcode-linker").exists() && !bin.join("llvm-bitcode-linker").exists() {
        missing.push("llvm-bitcode-linker");
    }
    // The bitcode linker drives `llvm-link`, `opt` and `llc` from llvm-tools.
    if !["llvm-link", "opt", "llc"].iter().all(|t| bin.join(t).exists()) {
        missing.push("llvm-tools");
    }
    missing
}

/// Why this machine looks like it has an NVIDIA driver, if it does: the kernel module's
/// files, the driver's device nodes, or `libcuda` in the usual places.
pub fn driver_present() -> Option<String> {
    if std::env::var(ASSUME_DRIVER).is_ok_and(|v| v == "1") {
        return Some(format!("{ASSUME_DRIVER}=1"));
    }
    for p in ["/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/dxg"] {
        if Path::new(p).exists() {
            return Some(p.into());
        }
    }
    let mut dirs: Vec<PathBuf> =
        std::env::var("LD_LIBRARY_PATH").unwrap_or_default().split(':').filter(|d| !d.is_empty()).map(PathBuf::from).collect();
    dirs.extend(
        ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/lib/wsl/lib"].map(PathBuf::from),
    );
    if cfg!(windows) {
        dirs.push(PathBuf::from(std::env::var("SystemRoot").unwrap_or_else(|_| "C:\\Windows".into())).join("System32"));
    }
    let lib = if cfg!(windows) { "nvcuda.dll" } else { "libcuda.so.1" };
    dirs.into_iter().map(|d| d.join(lib)).find(|p| p.exists()).map(|p| p.display().to_string())
}

fn toolchain_name() -> String {
    std::env::var("RUSTUP_TOOLCHAIN").unwrap_or_else(|_| "stable".into())
}
