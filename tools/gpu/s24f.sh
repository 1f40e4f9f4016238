#!/usr/bin/env bash
# Session 24, sixth call (one H100/H200): the final code of the session. Suites (gpu,
# contended hostile, streams, residency); then the registration queue restored and
# room taken from `completed` without a scan when it is there, against 64e15fd (the
# prefetch build) staged as .gpu/b/*-base, alternated; the phase-timing build for the
# breakdown under four producers.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s24f} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" | tee -a $L/device.txt
step 120 gpu "$(bin $T/gpu)" --include-ignored
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
step 60 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
for r in new base; do
  b="$(bin .gpu/benches/streaming)"; [ $r = base ] && b=.gpu/b/streaming-base
  step 120 streaming-$r "$b" --bench --noplot
  grep -E "^persistent|^axpy" $L/streaming-$r.log
done
for r in new base; do
  b="$(bin .gpu/benches/dispatch)"; [ $r = base ] && b=.gpu/b/dispatch-base
  DISPATCH_HOST=short step 90 dispatch-$r "$b" --bench --noplot
  grep -E "host-fed|split|into pinned" "$L/dispatch-$r.log" | head -24
done
step 120 streaming-phases .gpu/b/streaming-phases --bench --noplot
grep -E "^persistent" $L/streaming-phases.log
grep -A14 "^phases, 4 thread(s) x 256" $L/streaming-phases.log
exit 0
