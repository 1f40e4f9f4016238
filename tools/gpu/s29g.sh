#!/usr/bin/env bash
# Session 29: the final code after the review's fixes: the GPU suites, and the
# streaming bench's every row once.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s29g} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
step 150 streaming "$(bin .gpu/benches/streaming)" --bench --noplot
grep -E "^persistent|^axpy|thrpt" $L/streaming.log | grep -v "%"
exit 0
