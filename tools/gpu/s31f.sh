#!/usr/bin/env bash
# Session 31, final code (the review's fixes): the suites; the one-task round trip of
# HEAD~2's build and this one (blocking, await, copy path); streaming at the targets'
# rows.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s31f} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
latency_ab 1
grep -E "submit \+|await" $L/latency-*.log | grep -v Bench | head -20
STREAMING_ROWS=1x256,4x256,1x1024,4x4096 stream_run targets $(bin .gpu/benches/streaming) 'persistent_'
exit 0
