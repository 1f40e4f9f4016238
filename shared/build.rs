//! Tells the crates that build kernel images where these sources lie (`links`):
//! `resident-device`'s build script reads `DEP_RESIDENT_SHARED_ROOT` and passes it on.

fn main() {
    println!("cargo:root={}", std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
}
