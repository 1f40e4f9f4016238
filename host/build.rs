//! Compiles the device crate to PTX with rustc's own `nvptx64-nvidia-cuda` target and
//! embeds it in the host crate (`OUT_DIR/resident.ptx`, read by `host/cuda/module.rs`).
//!
//! The nested build runs `cargo build --release --target nvptx64-nvidia-cuda
//! -Zbuild-std=core` on `device/ptx`, in a child environment cleaned of the outer
//! cargo's variables: inheriting `CARGO_TARGET_DIR`, `RUSTC_WRAPPER`, `RUSTFLAGS` and
//! friends makes the child deadlock on the outer build's lock or build with the wrong
//! settings. `RUSTC_BOOTSTRAP=1` is set in the child only: the outer build stays on
//! stable Rust.
//!
//! If a needed rustup component is missing, the build prints the `rustup component add`
//! line that fixes it, embeds no PTX, and sets `cfg(resident_no_ptx)`: the CPU backend
//! still works and the CUDA backend reports `Error::PtxUnavailable`. Setting
//! `RESIDENT_NO_PTX=1` does the same on purpose. Any other failure of the device build
//! (a compile error in `device/`) fails this build.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "nvptx64-nvidia-cuda";

/// Register cap of the `Nn` flavor's persistent kernel (`.maxnreg`; rustc has no way to
/// say it). Uncapped it takes 164 registers, so only three 128-thread blocks fit on an
/// SM (two used, one left free); at 128, four fit, with 132 bytes of spills (ptxas,
/// sm_90, 2026-11-23). Measured on the H100: the fused conv + BN pass at three blocks
/// per SM is 18-23% faster capped than uncapped at two; the record pipeline is the
/// same capped or not at two (docs/benchmarks.md). The environment's
/// `RESIDENT_NN_MAXNREG` overrides it at build time (0: no cap), for such measurements.
const NN_MAX_REGISTERS: u32 = 128;

/// Register cap of the standard persistent kernel: 80 lets three 256-thread blocks fit
/// on an SM (two used, one left free, as `CudaBackend::new` wants). Uncapped, reading
/// resident lists in place (device/src/lists.rs) took it to 90 (two fit, one used);
/// capped it spilled 12 bytes (ptxas, sm_90, 2026-11-23), none since the task context
/// stays in registers (2026-11-24). `RESIDENT_MAXNREG` overrides
/// it at build time (0: no cap).
const MAX_REGISTERS: u32 = 80;

/// Inserts `.maxnreg max` into the PTX entry `entry` (before its body), if present.
fn cap_registers(ptx: &str, entry: &str, max: u32) -> String {
    let Some(at) = ptx.find(&format!(".entry {entry}(")) else { return ptx.to_string() };
    let Some(close) = ptx[at..].find(')') else { return ptx.to_string() };
    let Some(open) = ptx[at + close..].find('{') else { return ptx.to_string() };
    let body = at + close + open;
    format!("{}.maxnreg {max}\n{}", &ptx[..body], &ptx[body..])
}
/// Oldest architecture the PTX targets. Below sm_70, atomics with orderings abort llc;
/// sm_80 keeps Ampere in; the driver compiles the PTX for the GPU it finds (sm_90 on
/// an H100). CI checks the PTX with `ptxas -arch=sm_90`.
const TARGET_CPU: &str = "sm_80";

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let ptx_out = out.join("resident.ptx");
    for dir in ["device/src", "device/ptx/lib.rs", "device/ptx/Cargo.toml", "device/Cargo.toml", "shared/src", "shared/Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    println!("cargo:rerun-if-env-changed=RESIDENT_NO_PTX");
    println!("cargo:rerun-if-env-changed=RESIDENT_NN_MAXNREG");
    println!("cargo:rerun-if-env-changed=RESIDENT_MAXNREG");

    let skip = env::var("RESIDENT_NO_PTX").is_ok_and(|v| !v.is_empty() && v != "0");
    let missing = if skip { vec![] } else { missing_components() };
    if skip || !missing.is_empty() {
        if !missing.is_empty() {
            println!(
                "cargo:warning=resident: no PTX built (the CUDA backend will be unavailable; the CPU backend works). \
                 Fix: rustup component add {} --toolchain {}",
                missing.join(" "),
                toolchain_name()
            );
        }
        println!("cargo:rustc-cfg=resident_no_ptx");
        fs::write(&ptx_out, "").unwrap();
        return;
    }

    let target_dir = nested_target_dir(&out);
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root.join("device/ptx"))
        .args(["build", "--release", "--target", TARGET, "-Zbuild-std=core"])
        .arg("--target-dir")
        .arg(&target_dir);
    clean_env(&mut cmd);
    cmd.env("RUSTC_BOOTSTRAP", "1").env("CARGO_ENCODED_RUSTFLAGS", format!("-Ctarget-cpu={TARGET_CPU}"));
    let status = cmd.status().unwrap_or_else(|e| panic!("resident: could not run cargo for the device build: {e}"));
    if !status.success() {
        panic!("resident: the device build (device/ptx for {TARGET}) failed; see the errors above");
    }
    let built = target_dir.join(TARGET).join("release").join("resident_ptx.ptx");
    let ptx = fs::read_to_string(&built).unwrap_or_else(|e| panic!("resident: no PTX at {}: {e}", built.display()));
    let cap = env::var("RESIDENT_NN_MAXNREG").ok().and_then(|v| v.parse().ok()).unwrap_or(NN_MAX_REGISTERS);
    let ptx = if cap == 0 { ptx } else { cap_registers(&ptx, "resident_persistent_nn", cap) };
    let cap = env::var("RESIDENT_MAXNREG").ok().and_then(|v| v.parse().ok()).unwrap_or(MAX_REGISTERS);
    let ptx = if cap == 0 { ptx } else { cap_registers(&ptx, "resident_persistent", cap) };
    fs::write(&ptx_out, &ptx).unwrap();
    // A stable place for tools (CI's ptxas check, inspection by hand).
    let _ = fs::write(target_dir.join("resident.ptx"), &ptx);
}

/// The rustup components the device build needs that this toolchain lacks.
///
/// Each checked path is also named in `rerun-if-changed`: a path that does not exist
/// makes cargo rerun this script on every build, so installing the component is seen
/// at the next build, not only after `cargo clean`.
fn missing_components() -> Vec<&'static str> {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let Some(sysroot) = sysroot else { return vec!["rust-src", "llvm-tools", "llvm-bitcode-linker"] };
    let rustlib = sysroot.join("lib/rustlib");
    let host = env::var("HOST").unwrap();
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
    if !has_llvm_tools(&bin) {
        missing.push("llvm-tools");
    }
    missing
}

/// The bitcode linker drives `llvm-link`, `opt` and `llc` from the llvm-tools component.
fn has_llvm_tools(bin: &Path) -> bool {
    ["llvm-link", "opt", "llc"].iter().all(|t| bin.join(t).exists())
}

fn toolchain_name() -> String {
    env::var("RUSTUP_TOOLCHAIN").unwrap_or_else(|_| "1.95.0".into())
}

/// `<outer target dir>/nvptx`: shared by every profile of the outer build, so the
/// 25-second core rebuild happens once, not once per profile.
fn nested_target_dir(out: &Path) -> PathBuf {
    // OUT_DIR is <target>/<profile or triple/profile>/build/<pkg>-<hash>/out.
    out.ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "build"))
        .and_then(|build| build.parent()?.parent().map(Path::to_path_buf))
        .map(|t| if t.join("CACHEDIR.TAG").exists() { t } else { t.parent().map(Path::to_path_buf).unwrap_or(t) })
        .unwrap_or_else(|| out.to_path_buf())
        .join("nvptx")
}

/// Removes every variable by which the outer cargo would leak into the child.
fn clean_env(cmd: &mut Command) {
    for (key, _) in env::vars_os() {
        let k = key.to_string_lossy();
        let leaks = k.starts_with("CARGO_")
            || k.starts_with("RUSTC")
            || k.starts_with("RUSTDOC")
            || k == "RUSTFLAGS"
            || k == "TARGET"
            || k == "HOST"
            || k == "OUT_DIR"
            || k == "OPT_LEVEL"
            || k == "PROFILE"
            || k == "DEBUG"
            || k == "NUM_JOBS"
            || k.starts_with("DEP_");
        let keep = k == "CARGO_HOME";
        if leaks && !keep {
            cmd.env_remove(&key);
        }
    }
}
