#!/usr/bin/env bash
# Session 30: the GPU suites on the final code; then where eight producers x 256 wait,
# phase-timing with the 64-entry run table (the code) and a 128-entry one.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s30g} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
for v in 64 128; do
  STREAMING_ROWS=4x256,8x256 step 60 phases-$v .gpu/baseline/streaming-phases-$v --bench --noplot 'persistent_'
  grep -E "^phases|^  [a-z_]+ +[0-9]+ laps|thrpt" $L/phases-$v.log | grep -v "%"
done
exit 0
