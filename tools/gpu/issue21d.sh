#!/usr/bin/env bash
# Issue 21, third GPU run: the hostile scenarios, the suites, latency, after one
# runtime per device (`DeviceInUse`, the claim kept by `Runtime::gpu` handles too) and
# the synchronous pageable upload.
#   here: tools/gpu/pack.sh; there: bash tools/gpu/issue21d.sh [log-name]   (carry [".gpu"])
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue21d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
step 240 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$" $L/hostile.log | sort | uniq -c | head -40
for t in gpu streams_gpu custom_task_gpu fused_ops_gpu; do step 150 $t "$(bin $T/$t)" --include-ignored --test-threads 1; done
SOAK_SECS=60 step 100 soak "$(bin $T/soak)" --include-ignored --exact soak --nocapture
tail -5 $L/soak.log
step 100 latency "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "^persistent|^  \(|^launch|^graph" $L/latency.log | head -20
exit 0
