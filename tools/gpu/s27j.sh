#!/usr/bin/env bash
# Session 27, the final code (pipelined parts of 512): the gpu and hostile suites.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s27j} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --nocapture
grep -E "pipelined batches" $L/gpu.log | cut -c1-300
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
exit 0
