#!/usr/bin/env bash
# Session 28: the final code (run table of 64, the check 64 ahead): suites, the 20k
# batch against bf44cc0 (DISPATCH_HOST=pipe, alternated), streaming, the timeline.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s28d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
DISPATCH_HOST=pipe step 120 pipe-old .gpu/baseline/dispatch-old --bench --noplot
grep -E "^host-fed" $L/pipe-old.log
DISPATCH_HOST=pipe step 120 pipe-new "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^host-fed" $L/pipe-new.log
step 150 streaming "$(bin .gpu/benches/streaming)" --bench --noplot
grep -E "^persistent" $L/streaming.log
DISPATCH_HOST=timeline step 60 timeline "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^timeline" $L/timeline.log
exit 0
