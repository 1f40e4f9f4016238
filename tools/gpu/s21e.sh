#!/usr/bin/env bash
# Session 21, issue 23's peer path on two GPUs: the multi suite with the peer-link
# scenarios, the multi bench with the peer row, then the one-GPU suite and the quick
# dispatch summary (the completion path gained the peer branch).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s21e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nccl_env
step 150 multi "$(multi_bin)" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
step 60 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -A6 "follow-up" $L/multi-bench.log; grep "peer link" $L/multi-bench.log
step 100 gpu "$(bin $T/gpu)" --include-ignored --test-threads 1
DISPATCH_QUICK=1 step 150 dispatch-quick "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^summary|^variant|^list|^host-fed|^one launch|^CUDA Graph|^device copy" $L/dispatch-quick.log | head -20
exit 0
