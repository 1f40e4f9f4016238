#!/usr/bin/env bash
# Session 29: the GPU suites on the final code (after the simplifying commit, which
# moved the context bind of run publications into the CUDA backend).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s29j} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
exit 0
