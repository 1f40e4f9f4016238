//! Build-script helper of `resident`: compiles a device crate's task set (and any
//! ordinary kernels beside it) into a kernel image that the host loads with
//! `resident::kernel_image!` and `Runtime::builder().kernel(...)`.
//!
//! In the build script of the crate that embeds the image (your host crate):
//!
//! ```text
//! // build.rs
//! fn main() {
//!     resident_build::KernelBuild::new("my_tasks")
//!         .device_crate("my-device")           // the no_std crate with your tasks
//!         .task_set("my_device::MyTasks")      // declared there with task_set!
//!         .build();
//! }
//! ```
//!
//! and in its code `let image = resident::kernel_image!("my_tasks");`.
//!
//! What `build` does:
//! 1. Writes a small kernel crate into `OUT_DIR` whose entry points run the persistent
//!    loop, the relay and the one-task baseline monomorphized for your set (no dynamic
//!    dispatch: the set's dispatcher is inlined into the loop), plus one entry per
//!    ordinary kernel ([`KernelBuild::kernel`]).
//! 2. Compiles it with rustc's own `nvptx64-nvidia-cuda` target
//!    (`cargo build --release --target nvptx64-nvidia-cuda -Zbuild-std=core`,
//!    `RUSTC_BOOTSTRAP=1` in the child's environment only), into the outer build's
//!    target directory (`target/nvptx`), so `core` is built once for every image.
//! 3. Caps the persistent kernel's registers (`.maxnreg`, which rustc cannot say) and
//!    writes `OUT_DIR/<name>.ptx`, a copy in `target/nvptx/images/` for tools, and
//!    `OUT_DIR/<name>.rs`, the expression `kernel_image!` includes.
//!
//! A missing device toolchain never passes unnoticed ([`toolchain`]): on a machine with
//! an NVIDIA driver the build fails with the `rustup component add` line that fixes it;
//! without a driver it warns and builds an image without PTX (the CPU backend runs it);
//! `RESIDENT_NO_PTX=1` asks for that on purpose.
#![warn(missing_docs)]

mod env;
mod generate;
mod ptx;
pub mod toolchain;

use std::path::{Path, PathBuf};
use std::process::Command;

pub use ptx::{cap_registers, entries};

/// The target rustc compiles device code for.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// Oldest architecture the PTX targets: below sm_70 atomics with orderings abort llc;
/// sm_80 keeps Ampere in. The driver compiles the PTX for the GPU it finds.
pub const TARGET_CPU: &str = "sm_80";

/// One kernel image to build: a task set and, optionally, ordinary kernels.
#[derive(Clone, Debug)]
pub struct KernelBuild {
    name: String,
    device_crate: Option<PathBuf>,
    task_set: String,
    kernels: Vec<(String, String)>,
    block_threads: u32,
    max_registers: Option<u32>,
    scratch_bytes_per_warp: u32,
    runtime_crate: String,
    list_chunks: bool,
}

/// What [`KernelBuild::build`] produced: what the host needs to load the image.
#[derive(Clone, Debug)]
pub struct Image {
    /// The image's name, as given to [`KernelBuild::new`].
    pub name: String,
    /// The PTX text; empty when the build carries none (no toolchain, or
    /// `RESIDENT_NO_PTX`).
    pub ptx: String,
    /// `OUT_DIR/<name>.ptx`.
    pub ptx_path: PathBuf,
    /// `OUT_DIR/<name>.rs`: what `kernel_image!` includes.
    pub rs_path: PathBuf,
    /// The entry points: `resident_persistent`, `resident_relay`, `resident_one_task`,
    /// `resident_wait_ticket`, then the ordinary kernels.
    pub entries: Vec<String>,
    /// Threads per block the persistent kernel was built for.
    pub block_threads: u32,
    /// The register cap of `resident_persistent` (0: none).
    pub max_registers: u32,
    /// Scratch shared memory per warp.
    pub scratch_bytes_per_warp: u32,
}

/// The persistent kernel's entry point in every image.
pub const PERSISTENT_ENTRY: &str = "resident_persistent";

impl KernelBuild {
    /// An image called `name` (letters, digits and `_`; it names the output files and
    /// the `kernel_image!` argument). By default it runs `resident_device::Builtins`
    /// in 256-thread blocks capped at 80 registers, with no scratch memory.
    pub fn new(name: &str) -> Self {
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "resident-build: image name `{name}`: use letters, digits and `_`"
        );
        Self {
            name: name.into(),
            device_crate: None,
            task_set: "resident_device::Builtins".into(),
            kernels: vec![],
            block_threads: 256,
            max_registers: Some(80),
            scratch_bytes_per_warp: 0,
            runtime_crate: "::resident".into(),
            list_chunks: true,
        }
    }

    /// The device crate (a `#![no_std]` library that depends on `resident-device`),
    /// relative to the calling crate's manifest directory. Leave it out for a set of
    /// `resident-device` itself.
    pub fn device_crate(mut self, path: impl AsRef<Path>) -> Self {
        self.device_crate = Some(path.as_ref().to_path_buf());
        self
    }

    /// The path of the task set type, as the host crate names it
    /// (`my_device::MyTasks`; its first segment is the device crate's name).
    pub fn task_set(mut self, path: &str) -> Self {
        self.task_set = path.into();
        self
    }

    /// An ordinary kernel: entry point `entry` runs `ty` (a `resident_device::DeviceKernel`
    /// implementation, by path). Launch it with the typed launch API (`resident::stream`).
    pub fn kernel(mut self, entry: &str, ty: &str) -> Self {
        assert!(
            entry.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !entry.starts_with("resident_persistent"),
            "resident-build: kernel entry `{entry}`: letters, digits and `_`, not a name of the runtime's"
        );
        self.kernels.push((entry.into(), ty.into()));
        self
    }

    /// Threads per block of the persistent kernel (a multiple of 32; the runtime's
    /// `block_threads` overrides it at run time).
    pub fn block_threads(mut self, n: u32) -> Self {
        assert!(n > 0 && n.is_multiple_of(32) && n <= 1024, "resident-build: block_threads must be a multiple of 32 up to 1024");
        self.block_threads = n;
        self
    }

    /// The persistent kernel's register cap (`.maxnreg`), or `None` for no cap. The
    /// runtime leaves one block slot per SM free: pick a cap that lets one more block
    /// fit than you want to run (65536 registers per SM on Hopper). The environment's
    /// `RESIDENT_MAXNREG` overrides it at build time (0: no cap), for measurements.
    pub fn max_registers(mut self, n: Option<u32>) -> Self {
        self.max_registers = n;
        self
    }

    /// Bytes of shared memory each warp gets as scratch (`TaskCx::scratch`), kept for
    /// the kernel's life (a multiple of 16; the runtime asks for `warps per block ×
    /// this` of dynamic shared memory per block).
    pub fn scratch_bytes_per_warp(mut self, n: u32) -> Self {
        assert!(n.is_multiple_of(16), "resident-build: scratch_bytes_per_warp must be a multiple of 16");
        self.scratch_bytes_per_warp = n;
        self
    }

    /// Whether the persistent loop runs resident lists in chunks (on by default): a list
    /// whose tasks wait on no counter then takes one queue slot per `ceil(len /
    /// workers)` tasks, run one after another by the warp that claims it
    /// (docs/protocol.md 4c). Off, the loop carries no chunk code and a list takes a slot
    /// per task: for a set whose code is large enough that the chunk code's few
    /// registers become spills around it (the fused-op images: 276 to 284 and 56 to 84
    /// bytes, and the fused conv + BN 4% slower on an H200, 2026-11-29).
    pub fn list_chunks(mut self, on: bool) -> Self {
        self.list_chunks = on;
        self
    }

    /// The path the generated `.rs` uses for the runtime crate (`::resident` by
    /// default; `crate` inside `resident` itself).
    pub fn runtime_crate(mut self, path: &str) -> Self {
        self.runtime_crate = path.into();
        self
    }

    /// Builds the image (see the crate docs); panics, with what to do, when it cannot.
    pub fn build(self) -> Image {
        let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR"));
        let out = PathBuf::from(env::var("OUT_DIR"));
        let device = self.device_crate.as_ref().map(|p| manifest.join(p));
        for dir in [Some(resident_device_dir()), Some(resident_shared_dir()), device.clone()].into_iter().flatten() {
            println!("cargo:rerun-if-changed={}", dir.display());
        }
        for var in ["RESIDENT_NO_PTX", "RESIDENT_MAXNREG", DEVICE_TIMING, toolchain::ASSUME_DRIVER] {
            println!("cargo:rerun-if-env-changed={var}");
        }
        let cap =
            std::env::var("RESIDENT_MAXNREG").ok().and_then(|v| v.parse::<u32>().ok()).map_or(self.max_registers, |c| (c > 0).then_some(c));
        let mut entries: Vec<String> =
            [PERSISTENT_ENTRY, "resident_relay", "resident_one_task", "resident_wait_ticket"].iter().map(|s| s.to_string()).collect();
        entries.extend(self.kernels.iter().map(|(e, _)| e.clone()));

        let ptx = match toolchain::decide() {
            toolchain::Decision::Build => {
                let krate = generate::kernel_crate(&self, &out, device.as_deref());
                let built = compile(&krate, &out, self.list_chunks);
                match cap {
                    Some(c) => cap_registers(&built, PERSISTENT_ENTRY, c),
                    None => built,
                }
            }
            toolchain::Decision::NoPtx => String::new(),
        };
        let ptx_path = out.join(format!("{}.ptx", self.name));
        let rs_path = out.join(format!("{}.rs", self.name));
        write(&ptx_path, &ptx);
        if !ptx.is_empty() {
            let images = env::nested_target_dir(&out).join("images");
            let _ = std::fs::create_dir_all(&images);
            let _ = std::fs::write(images.join(format!("{}.ptx", self.name)), &ptx);
        }
        write(&rs_path, &generate::host_expr(&self, ptx.is_empty()));
        // Where `resident::kernel_image!` finds it: a crate without this build step gets
        // that macro's message, not an unexplained missing `OUT_DIR`.
        println!("cargo:rustc-env=RESIDENT_KERNEL_IMAGES={}", out.display());
        Image {
            name: self.name,
            ptx,
            ptx_path,
            rs_path,
            entries,
            block_threads: self.block_threads,
            max_registers: cap.unwrap_or(0),
            scratch_bytes_per_warp: self.scratch_bytes_per_warp,
        }
    }
}

/// Set (to anything but `0`) at build time: a profiling build, whose persistent loop
/// counts the cycles of its steps (docs/profiling.md). Never for speed figures.
pub const DEVICE_TIMING: &str = "RESIDENT_DEVICE_TIMING";

/// Whether this is a profiling build ([`DEVICE_TIMING`]).
pub fn device_timing() -> bool {
    std::env::var(DEVICE_TIMING).is_ok_and(|v| v != "0")
}

/// `resident-device`'s sources, as cargo resolved them for the build that runs this
/// build script: `resident-device`'s own build script (`links`) tells its direct
/// dependents, `resident`'s passes it on to its own (`DEP_RESIDENT_DEVICE_ROOT` in both).
/// Never a path compiled into this crate: one build of it may serve several checkouts
/// that share a `CARGO_TARGET_DIR`, and a registry has no `../device` beside it.
fn resident_device_dir() -> PathBuf {
    dep_dir("DEP_RESIDENT_DEVICE_ROOT")
}

/// `resident-shared`'s sources, as for [`resident_device_dir`].
fn resident_shared_dir() -> PathBuf {
    dep_dir("DEP_RESIDENT_DEVICE_SHARED_ROOT")
}

fn dep_dir(var: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(dir) => PathBuf::from(dir),
        None => panic!(
            "resident-build: {var} is not set: the crate whose build script builds a kernel image must depend on `resident` \
             (or `resident-device`) directly, in [dependencies]"
        ),
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("resident-build: cannot write {}: {e}", path.display()));
}

/// Runs the nested cargo on the generated crate; the PTX it produced.
fn compile(krate: &generate::KernelCrate, out: &Path, list_chunks: bool) -> String {
    let target_dir = env::nested_target_dir(out);
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(&krate.dir).args(["build", "--release", "--target", TARGET, "-Zbuild-std=core"]).arg("--target-dir").arg(&target_dir);
    env::clean(&mut cmd);
    // A profiling build times the persistent loop's steps (`resident_device::steps`).
    let timing = if device_timing() { "\x1f--cfg\x1fresident_device_timing" } else { "" };
    // An image without list chunks (`KernelBuild::list_chunks`).
    let chunks = if list_chunks { "" } else { "\x1f--cfg\x1fresident_no_list_chunks" };
    cmd.env("RUSTC_BOOTSTRAP", "1").env("CARGO_ENCODED_RUSTFLAGS", format!("-Ctarget-cpu={TARGET_CPU}{timing}{chunks}"));
    let status = cmd.status().unwrap_or_else(|e| panic!("resident-build: could not run cargo for the device build: {e}"));
    if !status.success() {
        panic!("resident-build: the device build of image `{}` (for {TARGET}) failed; see the errors above", krate.image);
    }
    let built = target_dir.join(TARGET).join("release").join(format!("{}.ptx", krate.lib_name));
    std::fs::read_to_string(&built).unwrap_or_else(|e| panic!("resident-build: no PTX at {}: {e}", built.display()))
}
