#!/usr/bin/env bash
# Session 25, last call (one H100/H200): the session's final code. The review's fix (the
# stream-write probe on the control stream, waited for, and only where the copy path
# publishes); helpers that linger only while no other pass runs. Every GPU suite but
# the soak; DISPATCH_HOST=short (rows with helpers asleep between passes); streaming
# with lingering helpers and without (STREAMING_HELPERS_SLEEP=1).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s25l} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --nocapture
grep -E "copy path's tail by" $L/gpu.log | sort | uniq -c
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
step 60 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
DISPATCH_HOST=short step 150 dispatch "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^host-fed, |noop batch split|into pinned" $L/dispatch.log
for r in spin sleep; do
  if [ $r = sleep ]; then export STREAMING_HELPERS_SLEEP=1; else unset STREAMING_HELPERS_SLEEP; fi
  step 120 streaming-$r "$(bin .gpu/benches/streaming)" --bench --noplot
  grep -E "^persistent|^axpy" $L/streaming-$r.log
done
exit 0
