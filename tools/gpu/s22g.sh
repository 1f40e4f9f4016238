#!/usr/bin/env bash
# Session 22's last call, on two GPUs: the spawn ring's pops by count (benches/spawn.rs;
# the peer bursts of the multi bench go through it), every suite that spawns or links
# (gpu: trees; fused_ops: the pipeline; multi: peer links), the rest of the suites on
# the final build, the dispatch summary and the one-task round trip against 0655557.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s22g} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nccl_env
step 60 spawn "$(bin .gpu/benches/spawn)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]|^spawn/" $L/spawn.log | head -12
step 90 gpu "$(bin $T/gpu)" --include-ignored
step 60 fused "$(bin $T/fused_ops_gpu)" --include-ignored --test-threads 1
step 60 custom "$(bin $T/custom_task_gpu)" --include-ignored --test-threads 1
step 60 multi "$(multi_bin)" --include-ignored --test-threads 1
step 60 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]|^multi/" $L/multi-bench.log | head -16
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
step 60 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 45 latency-old .gpu/baseline/latency-old --bench --noplot
grep -E "relay\): submit \+ wait|first task after" $L/latency-old.log | head -2
step 45 latency-new "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "relay\): submit \+ wait|first task after" $L/latency-new.log | head -2
DISPATCH_QUICK=1 step 90 dispatch-quick "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^summary|^variant|^list|^CUDA Graph|^device copy" $L/dispatch-quick.log | head -12
exit 0
