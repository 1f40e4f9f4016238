#!/usr/bin/env bash
# Issue 21 (soundness), on the GPU machine after ../shared/tools/gpu-pack (binaries
# renamed to their target names): the hostile-use scenarios (each in a child process),
# the suites the changes touched (lazy next claim and PRECLAIM off by default, racy
# element accesses (same PTX on nvptx), cancel words and dropped counter flags polled in
# waits, spawn backpressure, handles of one device mixing), then DISPATCH_QUICK, whose
# rows include the defaults (PRECLAIM off) against "defaults, preclaim" in one run, and
# latency.
#   here: tools/gpu/pack.sh; there: bash tools/gpu/issue21.sh [log-name]   (carry [".gpu"])
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue21} && source tools/gpu/common.sh
# gpu-pack keeps cargo's hashed names (name-<hash>): take either form.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
step 300 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads 1
grep -B2 -A12 "panicked" $L/hostile.log | head -40
step 240 gpu "$(bin $T/gpu)" --include-ignored --test-threads 1
grep -B2 -A12 "panicked" $L/gpu.log | head -40
for t in streams_gpu custom_task_gpu fused_ops_gpu gpu_faults; do step 150 $t "$(bin $T/$t)" --include-ignored --test-threads 1; done
DISPATCH_QUICK=1 step 200 dispatch-quick "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^summary|^variant|^list|^host-fed|^one launch|^CUDA Graph|^device copy" $L/dispatch-quick.log
step 100 latency "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "^persistent|^  \(|^launch|^graph" $L/latency.log | head -16
exit 0
