#!/usr/bin/env bash
# Session 29: the read-mostly registries lock and the kept take Vec (HEAD) against
# d3cfe60, alternated four times on the rows of the two open streaming targets; the
# GPU suites; one phase-timing run.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s29c} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
ROWS='persistent_(1_threads/(256|1024)|4_threads/256)$'
for i in 1 2 3 4; do
  for v in prev new; do
    b=.gpu/baseline/streaming-$v; [ $v = new ] && b=$(bin .gpu/benches/streaming)
    stream_run streaming-$v-$i $b "$ROWS"
  done
done
step 90 phases-new .gpu/baseline/streaming-phases-new --bench --noplot "$ROWS"
grep -E "thrpt|^phases|^  [a-z_]+ +[0-9]+ laps" $L/phases-new.log | head -60
exit 0
