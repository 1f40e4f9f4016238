#!/usr/bin/env bash
# Packages the four published crates (resident-shared, resident-device, resident-build,
# resident), with cargo's own verification (each packaged crate built from its package
# alone, resident's kernel image from the packaged device sources), then builds and runs
# a crate outside the workspace that depends on the packaged `resident`, with a device
# crate and a kernel image of its own, in the workspace's own target directory (two
# source trees sharing one CARGO_TARGET_DIR, as a global setting makes them); and a
# second clone of this repository, built in the same target directory, whose kernel
# image is built from its own device sources, not this tree's.
#   tools/package-check.sh [--offline]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target=${CARGO_TARGET_DIR:-$root/target}
# `cargo package` verifies each crate against the others through a registry of its own
# (target/package/tmp-registry), whose crates cargo extracts under
# $CARGO_HOME/registry/src/<that registry's hash>/ and, the version being the same,
# reuses on the next run: a second run would verify against the first run's sources.
# Those extractions are this script's own; they go first.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
[ -n "$version" ] || { echo "package-check: no [workspace.package] version in Cargo.toml"; exit 1; }
for d in "$cargo_home"/registry/src/*/; do
    case "$d" in */index.crates.io-*) continue ;; esac
    for c in resident-shared resident-device resident-build resident; do rm -rf "$d$c-$version"; done
done
cargo package -p resident-shared -p resident-device -p resident-build -p resident --allow-dirty "$@"
pkg=$target/package
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/src" "$out/device/src"
cat > "$out/Cargo.toml" <<TOML
[package]
name = "outside"
version = "0.1.0"
edition = "2024"

[dependencies]
resident = "0.1.0"
outside-device = { path = "device" }

[build-dependencies]
resident-build = "0.1.0"

# The packages just made, in place of a registry's.
[patch.crates-io]
resident = { path = "$pkg/resident-0.1.0" }
resident-device = { path = "$pkg/resident-device-0.1.0" }
resident-shared = { path = "$pkg/resident-shared-0.1.0" }
resident-build = { path = "$pkg/resident-build-0.1.0" }

[workspace]
members = ["device"]
TOML
cat > "$out/device/Cargo.toml" <<'TOML'
[package]
name = "outside-device"
version = "0.1.0"
edition = "2024"

[dependencies]
resident-device = "0.1.0"
TOML
cat > "$out/device/src/lib.rs" <<'RS'
#![no_std]
resident_device::task_set! {
    /// The built-in tasks, as a set of this crate's own.
    pub struct Mine: resident_device::Builtins {}
}
RS
cat > "$out/build.rs" <<'RS'
fn main() {
    resident_build::KernelBuild::new("mine").device_crate("device").task_set("outside_device::Mine").build();
}
RS
cat > "$out/src/main.rs" <<'RS'
fn main() {
    let image = resident::kernel_image!("mine");
    let rt = resident::Runtime::builder().kernel(image.clone()).build().unwrap();
    rt.submit(&[resident::Task::noop(7)]).unwrap().wait().unwrap();
    println!("outside the workspace: image `{}` ({} bytes of PTX), a task ran on {}", image.name(), image.ptx().len(), rt.backend());
}
RS
# The workspace's lock: the same versions, no registry index needed.
cp Cargo.lock "$out/Cargo.lock"
(cd "$out" && CARGO_TARGET_DIR=$target cargo run --release "$@")

# A second clone, the same target directory: each tree's built-in image from its own
# `device/` (the generated kernel crates, one per tree, name where they took it from).
git clone -q "$root" "$out/clone"
(cd "$out/clone" && CARGO_TARGET_DIR=$target cargo build --release -p resident "$@")
cargo build --release -p resident "$@"
for tree in "$root" "$out/clone"; do
  dev=$(cd "$tree/device" && pwd -P)
  grep -qsF "resident-device = { path = \"$dev\" }" "$target"/nvptx/crates/resident-image-resident-*/Cargo.toml \
    || { echo "no kernel image of $tree built from its own device sources ($dev)"; exit 1; }
done
echo "two trees, one target directory: each image built from its own device sources"
