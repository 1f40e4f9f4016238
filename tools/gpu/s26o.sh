#!/usr/bin/env bash
# Session 26, after the final read (copy_compact through widen, one streaming-store
# writer): the gpu and hostile suites, and the 20k batch rows.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s26o} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --nocapture
grep -E "tasks compact|pipelined batches" $L/gpu.log
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
DISPATCH_HOST=short step 200 dispatch "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^host-fed|into pinned" $L/dispatch.log | grep -v unchecked
exit 0
