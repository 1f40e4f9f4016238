#!/usr/bin/env bash
# Session 22, on two GPUs: the inbox warp (the relay kernel's second warp drains peer
# links' inboxes; the relay warp no longer does). Correctness first (multi suite, the
# main suites: the relay kernel has two warps now), then the multi bench (peer follow-up
# and bursts) and the one-task round trip old (0655557) / new alternated.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s22e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nccl_env
step 150 multi "$(multi_bin)" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
step 90 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]|^multi/" $L/multi-bench.log | head -30
step 120 gpu "$(bin $T/gpu)" --include-ignored
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored
step 90 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
step 90 faults "$(bin $T/gpu_faults)" --include-ignored --test-threads 1
latency_ab 2
exit 0
