#!/usr/bin/env bash
# Session 26, first call (one H100/H200): session 25's last code (f157727, 6d71f03) never
# ran on a GPU. Every GPU suite, the soak (60 s), and the latency bench (the copy rows:
# stream-written tail vs copies).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s26a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --nocapture
grep -E "copy path's tail by" $L/gpu.log | sort | uniq -c
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
step 60 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
SOAK_SECS=60 step 100 soak "$(bin $T/soak)" --include-ignored --exact soak --nocapture
tail -3 $L/soak.log
step 60 latency "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "time:|^[a-z].*p50" $L/latency.log | head -40
exit 0
