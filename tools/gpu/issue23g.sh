#!/usr/bin/env bash
# Issue 23, last run of session 20 on two GPUs: the review's fixes (NCCL with the
# runtime parked, links' flush/close/backlog, deferred NCCL destroy), the multi suite,
# the example, the multi bench (runtimes started at a barrier) with PyTorch's NCCL
# beside it, the residency suite.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue23g} && source tools/gpu/common.sh
bin() { for f in "$1" "$1"-*; do [ -x "$f" ] && [ "${f%.d}" = "$f" ] && { echo "$f"; return; }; done; echo "$1"; }
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
NCCL_DIR=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null)
mkdir -p /tmp/ncclib && ln -sf "$NCCL_DIR/libnccl.so.2" /tmp/ncclib/libnccl.so
export LD_LIBRARY_PATH=/tmp/ncclib:$NCCL_DIR:${LD_LIBRARY_PATH:-}
M=$(for f in $T/multi_gpu-*; do "$f" --list 2>/dev/null | grep -q links_exactly_once && echo "$f"; done | head -1)
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
