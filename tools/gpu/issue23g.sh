#!/usr/bin/env bash
# Issue 23, last run of session 20 on two GPUs: the review's fixes (NCCL with the
# runtime parked, links' flush/close/backlog, deferred NCCL destroy), the multi suite,
# the example, the multi bench (runtimes started at a barrier) with PyTorch's NCCL
# beside it, the residency suite.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue23g} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nccl_env
M=$(multi_bin)
step 200 multi "$M" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
step 60 example "$T/multi-gpu"
tail -3 $L/example.log
step 150 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]" $L/multi-bench.log | head -30
step 60 torch-nccl python3 tools/gpu/nccl_torch.py
grep "torch NCCL" $L/torch-nccl.log
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
exit 0
