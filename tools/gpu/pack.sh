#!/usr/bin/env bash
# Here (a machine with the Rust toolchain), before a run on a GPU machine without one:
# builds the workspace's test, bench and example binaries and stages them, stripped, in
# .gpu/ (tests/, benches/, examples/), without the tests that run on the CPU backend
# only, so that .gpu/ stays under the 64 MiB a device call carries. Then, on the GPU
# machine from the repository root: bash tools/gpu/suites.sh, bash tools/gpu/bench.sh.
#   tools/gpu/pack.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
excl="$(git rev-parse --git-dir)/info/exclude"
mkdir -p "$(dirname "$excl")"
grep -qx '/.gpu/' "$excl" 2>/dev/null || echo '/.gpu/' >> "$excl"
rm -rf .gpu && mkdir -p .gpu/tests .gpu/benches .gpu/examples
# The executables of the artifacts of the given target kinds, from cargo's JSON messages.
pick() { python3 -c '
import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"][0] in sys.argv[1].split(","):
        print(m["executable"])' "$1"; }
cargo test --release --workspace --no-run --message-format=json 2>/dev/null | pick "lib,test,bin" | while read -r f; do cp "$f" .gpu/tests/; done
cargo bench --workspace --no-run --message-format=json 2>/dev/null | pick "bench" | while read -r f; do cp "$f" .gpu/benches/; done
cargo build --release --workspace --examples --message-format=json 2>/dev/null | pick "example" | while read -r f; do cp "$f" .gpu/examples/; done
cd .gpu/tests
rm -f compile_fail-* cpu-* *_cpu-* loom_protocol-* miri_cpu-* prop_checks-* prop_model-* reliability_cpu-* \
    resident_build-* resident_shared-* resident_device-* custom_task_device-* fused_ops_device-*
cd ../..
strip .gpu/*/* 2>/dev/null || true
du -sh .gpu
ls .gpu/tests .gpu/benches .gpu/examples
