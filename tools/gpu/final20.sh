#!/usr/bin/env bash
# Session 20's last build on one GPU: the suites not run since the review's fixes to the
# CUDA backend and the residency refactor (gpu, hostile, streams, residency, gpu_faults).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-final20} && source tools/gpu/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
step 100 gpu "$(bin $T/gpu)" --include-ignored --test-threads 1
step 100 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads 1
grep -c "test result: ok. 1 passed" $L/hostile.log
step 60 streams_gpu "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 100 gpu_faults "$(bin $T/gpu_faults)" --include-ignored --test-threads 1
exit 0
