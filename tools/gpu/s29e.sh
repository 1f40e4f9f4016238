#!/usr/bin/env bash
# Session 29: the scan's skip of tickets settled clean (HEAD) against the waiter's own
# settle alone (751d227), ABBAAB; the 20k pipelined rows and the latency rows against
# the session's start (4466b86); the GPU suites; one phase-timing run.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s29e} && source tools/gpu/common.sh
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
DISPATCH_HOST=pipe step 80 pipe-base .gpu/baseline/dispatch-base --bench --noplot
grep -E "^host-fed pipelined" $L/pipe-base.log
DISPATCH_HOST=pipe step 80 pipe-new "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^host-fed pipelined" $L/pipe-new.log
step 60 latency-base .gpu/baseline/latency-base --bench --noplot
grep -E "p50|\(relay\)|\(copy\)|blocking" $L/latency-base.log | head -12
step 60 latency-new "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "p50|\(relay\)|\(copy\)|blocking" $L/latency-new.log | head -12
step 60 phases-new .gpu/baseline/streaming-phases-new --bench --noplot "$ROWS"
grep -E "thrpt|^phases|^  [a-z_]+ +[0-9]+ laps" $L/phases-new.log | grep -A11 "4 thread(s) x 256"
exit 0
