#!/usr/bin/env bash
# Session 29: the waiter's own settle (HEAD) against the read-mostly lock (8fdd7db) and
# the session's start (4466b86), in ABC CBA order twice (the order of a pair biased
# earlier calls); the GPU suites; one phase-timing run.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s29d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
ROWS='persistent_(1_threads/(256|1024)|4_threads/256)$'
i=0
for v in base prev new new prev base base prev new new prev base; do
  i=$((i+1))
  b=.gpu/baseline/streaming-$v; [ $v = new ] && b=$(bin .gpu/benches/streaming)
  stream_run streaming-$i-$v $b "$ROWS"
done
step 90 phases-new .gpu/baseline/streaming-phases-new --bench --noplot "$ROWS"
grep -E "thrpt|^phases|^  [a-z_]+ +[0-9]+ laps" $L/phases-new.log | head -60
exit 0
