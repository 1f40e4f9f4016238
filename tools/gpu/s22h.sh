#!/usr/bin/env bash
# Session 22, the review's device changes (pauses in the spawn ring's pop waits, a warp
# barrier before a range push's count, the relay kernel's third and later warps idle)
# on two GPUs: the suites that spawn and link, and the spawn and multi benches.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s22h} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nccl_env
step 60 multi "$(multi_bin)" --include-ignored --test-threads 1
step 60 gpu "$(bin $T/gpu)" --include-ignored
step 40 fused "$(bin $T/fused_ops_gpu)" --include-ignored --test-threads 1
step 30 spawn "$(bin .gpu/benches/spawn)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]|^spawn/" $L/spawn.log | head -10
step 30 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -E "peer link|link \(|relay by hand|one task|x one" $L/multi-bench.log | head -12
exit 0
