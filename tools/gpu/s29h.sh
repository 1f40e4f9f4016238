#!/usr/bin/env bash
# Session 29: the waiter's nudge (HEAD) against the code before it (91f63e3), ABBAAB on
# the open streaming targets' rows; the GPU suites; one phase-timing run.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s29h} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
ROWS='persistent_(1_threads/(256|1024)|4_threads/256)$'
i=0
for v in prev new new prev prev new; do
  i=$((i+1))
  b=.gpu/baseline/streaming-$v; [ $v = new ] && b=$(bin .gpu/benches/streaming)
  stream_run streaming-$i-$v $b "$ROWS"
done
step 60 phases-new .gpu/baseline/streaming-phases-new --bench --noplot "$ROWS"
grep -E "^phases|^  [a-z_]+ +[0-9]+ laps" $L/phases-new.log | grep -A10 -E "x 256:"
exit 0
