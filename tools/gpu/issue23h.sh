#!/usr/bin/env bash
# Issue 23: peer access enabled for Buffer::copy_from (cuCtxEnablePeerAccess beside
# resident kernels: the peer test alone first, under a short limit), then the multi
# suite and the bench's peer-copy rows.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue23h} && source tools/gpu/common.sh
bin() { for f in "$1" "$1"-*; do [ -x "$f" ] && [ "${f%.d}" = "$f" ] && { echo "$f"; return; }; done; echo "$1"; }
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
NCCL_DIR=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null)
mkdir -p /tmp/ncclib && ln -sf "$NCCL_DIR/libnccl.so.2" /tmp/ncclib/libnccl.so
export LD_LIBRARY_PATH=/tmp/ncclib:$NCCL_DIR:${LD_LIBRARY_PATH:-}
M=$(for f in $T/multi_gpu-*; do "$f" --list 2>/dev/null | grep -q links_exactly_once && echo "$f"; done | head -1)
step 45 peer "$M" --include-ignored --exact peer_copies
grep -q "test result: ok. 1 passed" $L/peer.log || { echo "peer copies did not pass: stop"; exit 0; }
step 150 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]" $L/multi-bench.log | head -34
step 150 multi "$M" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
exit 0
