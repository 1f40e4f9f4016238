#!/usr/bin/env bash
# Issue 23, first run on two GPUs: the topology, the multi-runtime and link tests, the
# multi-device bench, and the one-GPU suites again on this build (device code changed:
# the link push, the forward task, Status::BadLink).
#   here: tools/gpu/pack.sh; there: bash tools/gpu/issue23a.sh [log-name]   (carry [".gpu"])
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue23a} && source tools/gpu/common.sh
{ nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader; nvidia-smi topo -m; nvidia-smi topo -p2p rw; nvidia-smi topo -p2p a; } 2>&1 | tee $L/device.txt
step 300 multi "$(bin $T/multi_gpu)" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
step 240 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]" $L/multi-bench.log | head -30
step 120 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads 1
step 150 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads 1
grep -c "test result: ok. 1 passed" $L/hostile.log
DISPATCH_QUICK=1 step 150 dispatch-quick "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^summary|^variant|^list|^one launch|^CUDA Graph|^device copy" $L/dispatch-quick.log
exit 0
