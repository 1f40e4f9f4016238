#!/usr/bin/env bash
# Session 29: lock-free ticket registration, the striped compact count, the relay's
# poison hint, no bind on relayed runs (6623698+): the GPU suites (the fault flag of
# session 28 too), then phases and streaming against 4466b86, alternated.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s29a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
ROWS='persistent_(1|4)_threads/(256|1024)$'
for v in old new; do
  step 90 phases-$v .gpu/baseline/streaming-phases-$v --bench --noplot "$ROWS"
  grep -E "thrpt|^phases|^  [a-z_]+ +[0-9]+ laps" $L/phases-$v.log | head -80
done
for i in 1 2 3; do
  step 90 streaming-old-$i .gpu/baseline/streaming-old --bench --noplot "$ROWS"
  grep -E "^stream_noop|thrpt" $L/streaming-old-$i.log
  step 90 streaming-new-$i "$(bin .gpu/benches/streaming)" --bench --noplot "$ROWS"
  grep -E "^stream_noop|thrpt" $L/streaming-new-$i.log
done
exit 0
