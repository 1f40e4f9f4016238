#!/usr/bin/env bash
# Session 25, call e (one H100/H200): the copy path's tail by a stream write (landed,
# 90f5ce8) and a test before the scanner's try_lock (waiters beside a scan read a flag,
# not the lock's line), against 90f5ce8 (.gpu/b/*-base). The gpu suite; the one-task
# latency; streaming alternated new/base; the phase timings of both (phase-timing
# builds, .gpu/b/*-phases).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s25e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored
step 60 latency "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "^persistent \((relay|copy|copy, no memops)\): submit" $L/latency.log
for r in new base new2 base2; do
  b="$(bin .gpu/benches/streaming)"; case $r in base*) b=.gpu/b/streaming-base;; esac
  step 120 streaming-$r "$b" --bench --noplot
  grep -E "^persistent|^axpy" $L/streaming-$r.log
done
for r in new base; do
  step 150 phases-$r .gpu/b/streaming-$r-phases --bench --noplot
  grep -E "^persistent|^axpy" $L/phases-$r.log
done
exit 0
