#!/usr/bin/env bash
# Issue 22, first GPU run: elastic residency's tests, the suites it touches, the
# latency of the first task after an exit, and what an idle or busy runtime in another
# process costs a neighbour's GEMM and add, per policy.
#   here: tools/gpu/pack.sh; there: bash tools/gpu/issue22a.sh [log-name]   (carry [".gpu"])
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue22a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
step 240 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at|ResidencyStats" $L/residency.log | head -30
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads 1
for t in streams_gpu custom_task_gpu fused_ops_gpu; do step 100 $t "$(bin $T/$t)" --include-ignored --test-threads 1; done
step 150 latency "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "^persistent|^  \(|^launch|^graph" $L/latency.log | head -24
step 150 neighbour bash tools/gpu/neighbour.sh
cat $L/neighbour.log
exit 0
