#!/usr/bin/env bash
# Session 21, issue 22's SM partitions (green contexts): the partition tests, the
# partition bench (cuBLAS GEMM beside a partitioned runtime; the runtime by share),
# the residency suite (unpartitioned, unchanged path).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s21b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
cublas_env
step 120 partition "$(bin $T/partition)" --include-ignored --test-threads 1 --nocapture
grep -E "^test .*(ok|FAILED)$|panicked at|partition Sm" $L/partition.log | head -20
step 300 partition-bench "$(bin .gpu/benches/partition)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|Found|outlier|^  [0-9]" $L/partition-bench.log | head -40

exit 0
