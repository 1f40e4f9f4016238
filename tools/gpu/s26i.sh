#!/usr/bin/env bash
# Session 26: the regression test with its timeout (a lost task fails it instead of
# hanging), on the build before the review's fix (.gpu/b/gpu-old, cab3c83~1 with this
# test) and after, three times each, with a task deadline (a stall is a fault), alternated.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s26i} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for i in 1 2 3 4; do
  step 60 regression-old-$i .gpu/b/gpu-old --include-ignored --exact compact_runs_beside_next_lap_writers
  grep -E "marks not set|a ticket of|a submit|panicked|TaskHung" $L/regression-old-$i.log | head -3
  step 60 regression-new-$i "$(bin $T/gpu)" --include-ignored --exact compact_runs_beside_next_lap_writers
  grep -E "marks not set|a ticket of|a submit|panicked|TaskHung" $L/regression-new-$i.log | head -3
done
exit 0
