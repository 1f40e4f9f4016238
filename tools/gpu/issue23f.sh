#!/usr/bin/env bash
# Issue 23, sixth run on two GPUs: events and streams across devices (the stream API),
# the whole multi suite again, and the stream suite (its waits changed).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue23f} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nccl_env
M=$(multi_bin)
step 200 multi "$M" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
step 100 streams_gpu "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
exit 0
