//! The Rust toolchain's state for device code: the rustup components that compile it
//! to PTX (`resident-build`, docs/custom-tasks.md step 0).

use crate::out;
use std::process::Command;

/// The components the device build needs.
const NEEDED: [&str; 3] = ["rust-src", "llvm-tools", "llvm-bitcode-linker"];

/// Prints which of the needed components the active toolchain lacks, with the command
/// that adds them; the count of problems (1 if any is missing). Without rustup (a
/// machine that only runs binaries built elsewhere) it says so and finds none.
pub fn report() -> u32 {
    out!("toolchain (device code to PTX):");
    let installed = Command::new("rustup").args(["component", "list", "--installed"]).output();
    if let Ok(o) = &installed
        && !o.status.success()
    {
        out!("  rustup could not list the components: {}", String::from_utf8_lossy(&o.stderr).trim());
        return 1;
    }
    let Ok(out) = installed.as_ref().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()) else {
        out!("  no rustup here: device code is built on another machine (this binary's image carries PTX: {})", ptx());
        return 0;
    };
    let missing: Vec<&str> = NEEDED.iter().copied().filter(|c| !out.lines().any(|l| l == *c || l.starts_with(&format!("{c}-")))).collect();
    if missing.is_empty() {
        out!("  rust-src, llvm-tools, llvm-bitcode-linker: installed");
        return 0;
    }
    out!("  missing: {}", missing.join(", "));
    out!("  fix: rustup component add {}", missing.join(" "));
    1
}

fn ptx() -> &'static str {
    if resident::KernelImage::builtin().has_ptx() { "yes" } else { "no" }
}
