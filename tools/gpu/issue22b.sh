#!/usr/bin/env bash
# Issue 22, second GPU run (default policy Auto: idle exit after 10 ms on a GPU; relaunch
# latency of the first task after an exit (relay launched first), and what an idle or busy runtime in another
# process costs a neighbour's GEMM and add, per policy.
#   here: tools/gpu/pack.sh; there: bash tools/gpu/issue22b.sh [log-name]   (carry [".gpu"])
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue22b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
step 240 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at|ResidencyStats" $L/residency.log | head -30
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads 1
for t in streams_gpu custom_task_gpu fused_ops_gpu; do step 100 $t "$(bin $T/$t)" --include-ignored --test-threads 1; done
step 150 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads 1
grep -cE "^test .* ok$" $L/hostile.log
DISPATCH_QUICK=1 step 150 dispatch-quick "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^summary|^variant|^list|^one launch|^CUDA Graph|^device copy" $L/dispatch-quick.log
step 150 latency "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "^persistent|^  \(|^launch|^graph" $L/latency.log | head -24
step 150 neighbour bash tools/gpu/neighbour.sh
cat $L/neighbour.log
exit 0
