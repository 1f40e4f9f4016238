#!/usr/bin/env bash
# Session 22, one GPU: the spawn ring's throughput (benches/spawn.rs: is a pop that
# every idle warp tries by compare-and-swap the bound? fewer warps should then be
# faster); residency_gpu (kernel_out after the fix), partition, streams, custom-task and
# fused-op suites with the two-warp relay kernel; the dispatch summary on this card; the
# quickstart example.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s22f} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 120 spawn "$(bin .gpu/benches/spawn)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]|^spawn/" $L/spawn.log | head -12
step 90 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
step 90 partition "$(bin $T/partition)" --include-ignored --test-threads 1
step 90 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 90 custom "$(bin $T/custom_task_gpu)" --include-ignored --test-threads 1
step 120 fused "$(bin $T/fused_ops_gpu)" --include-ignored --test-threads 1
step 60 quickstart "$(ls .gpu/examples/quickstart* | head -1)"
tail -3 $L/quickstart.log
DISPATCH_QUICK=1 step 150 dispatch-quick "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^summary|^variant|^list|^host-fed|^one launch|^CUDA Graph|^device copy" $L/dispatch-quick.log | head -20
exit 0
