//! The build script's environment: its variables, the nested build's target directory,
//! and the child environment cleaned of the outer cargo's variables.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A variable cargo sets for build scripts.
pub fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("resident-build: `{name}` is not set: call it from a build script (build.rs)"))
}

/// `<outer target dir>/nvptx`: shared by every profile of the outer build and every
/// image, so the 25-second `core` build happens once.
pub fn nested_target_dir(out: &Path) -> PathBuf {
    // OUT_DIR is <target>/<profile or triple/profile>/build/<pkg>-<hash>/out.
    out.ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "build"))
        .and_then(|build| build.parent()?.parent().map(Path::to_path_buf))
        .map(|t| if t.join("CACHEDIR.TAG").exists() { t } else { t.parent().map(Path::to_path_buf).unwrap_or(t) })
        .unwrap_or_else(|| out.to_path_buf())
        .join("nvptx")
}

/// Removes every variable by which the outer cargo would leak into the child: with
/// them, the nested cargo deadlocks on the outer build's lock or builds with the wrong
/// settings.
pub fn clean(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
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
