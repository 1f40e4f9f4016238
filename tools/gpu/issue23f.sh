#!/usr/bin/env bash
# Issue 23, sixth run on two GPUs: events and streams across devices (the stream API),
# the whole multi suite again, and the stream suite (its waits changed).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue23f} && source tools/gpu/common.sh
bin() { for f in "$1" "$1"-*; do [ -x "$f" ] && [ "${f%.d}" = "$f" ] && { echo "$f"; return; }; done; echo "$1"; }
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
NCCL_DIR=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null)
mkdir -p /tmp/ncclib && ln -sf "$NCCL_DIR/libnccl.so.2" /tmp/ncclib/libnccl.so
export LD_LIBRARY_PATH=/tmp/ncclib:$NCCL_DIR:${LD_LIBRARY_PATH:-}
M=$(for f in $T/multi_gpu-*; do "$f" --list 2>/dev/null | grep -q links_exactly_once && echo "$f"; done | head -1)
step 200 multi "$M" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
step 100 streams_gpu "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
exit 0
