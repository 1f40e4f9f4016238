#!/usr/bin/env bash
# Session 24, last call (one H100/H200): a blocking wait that finds its ticket resolved
# by another thread's scan scans no more; against f90eb40 (.gpu/b/*-base). The gpu and
# hostile suites; the one-task latency (blocking, .await with a parking executor and
# with tokio, the copy path) that this session's changes to room, registration and
# waits touch; streaming.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s24g} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" | tee -a $L/device.txt
step 120 gpu "$(bin $T/gpu)" --include-ignored
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
for r in new base new2; do
  b="$(bin .gpu/benches/latency)"; [ $r = base ] && b=.gpu/b/latency-base
  step 60 latency-$r "$b" --bench --noplot
  grep -E "^persistent \((relay|copy)\): submit" $L/latency-$r.log
done
for r in new base; do
  b="$(bin .gpu/benches/streaming)"; [ $r = base ] && b=.gpu/b/streaming-base
  step 120 streaming-$r "$b" --bench --noplot
  grep -E "^persistent|^axpy" $L/streaming-$r.log
done
exit 0
