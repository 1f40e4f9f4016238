#!/usr/bin/env bash
# Session 32, last call: the GPU suites on the session's final code (e99cadb).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32p} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
exit 0
