#!/usr/bin/env bash
# Issue 23, fifth run on two GPUs: peer copies, NCCL between the runtimes' buffers
# (PyTorch's libnccl, found through its Python package), the multi-GPU example, the
# multi bench with its NCCL rows and PyTorch's NCCL all-reduce beside it, and the
# residency and hostile suites on this build.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue23e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nccl_env
ls -la /tmp/ncclib | tee -a $L/device.txt
M=$(multi_bin)
step 200 multi "$M" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
step 100 example "$T/multi-gpu"
cat $L/example.log | tail -6
step 100 example-test "$(bin $T/two_stage)" --include-ignored --nocapture
step 200 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]" $L/multi-bench.log | head -30
step 120 torch-nccl python3 tools/gpu/nccl_torch.py
grep "torch NCCL" $L/torch-nccl.log
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
step 100 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads 1
grep -c "test result: ok. 1 passed" $L/hostile.log
exit 0
