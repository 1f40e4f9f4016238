#!/usr/bin/env bash
# Session 21's first call, on two GPUs: session 20's final build. The one-GPU suites not
# run since its review fixes and clean-up (tools/gpu/final20.sh), then the multi-device
# suite with link_flush_and_owner_close, which has never run on a GPU.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s21a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nvidia-smi topo -m | head -4 > $L/topo.txt
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
step 100 gpu "$(bin $T/gpu)" --include-ignored --test-threads 1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads 1
step 60 streams_gpu "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 80 gpu_faults "$(bin $T/gpu_faults)" --include-ignored --test-threads 1
nccl_env
step 150 multi "$(multi_bin)" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
exit 0
