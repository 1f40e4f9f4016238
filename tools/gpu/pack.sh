#!/usr/bin/env bash
# Here (a machine with the Rust toolchain), before a run on a GPU machine without one:
# builds the workspace's test, bench and example binaries and stages them, stripped, in
# .gpu/ (tests/, benches/, examples/), without the tests that run on the CPU backend
# only. A device call carries at most 64 MiB: stage only what the call runs (all three
# together come to about 80 MiB). Then, on the GPU machine from the repository root:
# bash tools/gpu/suites.sh, bash tools/gpu/bench.sh.
#   tools/gpu/pack.sh [tests] [benches] [examples]      (none named: all three)
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
# want KIND ARGS...: whether KIND is among the script's arguments (all kinds when there are none).
want() { [ $# -eq 1 ] && return 0; for k in "${@:2}"; do [ "$k" = "$1" ] && return 0; done; return 1; }
if want tests "$@"; then
  cargo test --release --workspace --no-run --message-format=json 2>/dev/null | pick "lib,test,bin" | while read -r f; do cp "$f" .gpu/tests/; done
fi
if want benches "$@"; then
  cargo bench --workspace --no-run --message-format=json 2>/dev/null | pick "bench" | while read -r f; do cp "$f" .gpu/benches/; done
fi
if want examples "$@"; then
  cargo build --release --workspace --examples --message-format=json 2>/dev/null | pick "example" | while read -r f; do cp "$f" .gpu/examples/; done
fi
cd .gpu/tests
rm -f compile_fail-* cpu-* *_cpu-* loom_protocol-* miri_cpu-* prop_checks-* prop_model-* reliability_cpu-* \
    resident_build-* resident_shared-* resident_device-* custom_task_device-* fused_ops_device-*
cd ../..
strip .gpu/*/* 2>/dev/null || true
ls .gpu/tests .gpu/benches .gpu/examples
size=$(du -sm .gpu | cut -f1)
echo "$size MiB in .gpu"
[ "$size" -le 64 ] || echo "more than the 64 MiB a device call carries: stage fewer kinds (tools/gpu/pack.sh tests)"
