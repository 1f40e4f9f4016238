//! Tells the crates that build kernel images where the device sources lie (`links`):
//! `DEP_RESIDENT_DEVICE_ROOT` (this crate) and `DEP_RESIDENT_DEVICE_SHARED_ROOT`
//! (`resident-shared`, as its own build script said). `resident`'s build script passes
//! both on to its dependents, whose build scripts call `resident-build`: the device
//! build compiles exactly the sources this build resolved, wherever cargo took them
//! from (a workspace, a registry, a git checkout).

fn main() {
    println!("cargo:root={}", std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:shared_root={}", std::env::var("DEP_RESIDENT_SHARED_ROOT").expect("resident-shared's build script sets its root"));
}
