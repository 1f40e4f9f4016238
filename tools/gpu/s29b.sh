#!/usr/bin/env bash
# Session 29: e1265bf (scan hints, allocations before the producer lock, mid-size
# batches in halves) against the same with the halves off (MID_MIN = 4096) and against
# 9c379d9 (s29a's code), alternated; the GPU suites; one phase-timing run.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s29b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
ROWS='persistent_(1|4)_threads/(256|1024)$'
for i in 1 2 3; do
  for v in prev nomid new; do
    b=.gpu/baseline/streaming-$v; [ $v = new ] && b=$(bin .gpu/benches/streaming)
    step 90 streaming-$v-$i $b --bench --noplot "$ROWS"
    echo "$v-$i: $(grep -E '^persistent' $L/streaming-$v-$i.log | awk '{printf "%s ", $(NF-2)}')"
  done
done
step 90 phases-new .gpu/baseline/streaming-phases-new --bench --noplot "$ROWS"
grep -E "thrpt|^phases|^  [a-z_]+ +[0-9]+ laps" $L/phases-new.log | head -80
exit 0
