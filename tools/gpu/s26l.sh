#!/usr/bin/env bash
# Session 26, last call: submit_pipelined after review (helpers join the staging of the prefix). The gpu
# suite (pipelined_batches_exactly_once_or_partly), hostile, and the 20k batch rows
# "host-fed pipelined" beside "host-fed" (DISPATCH_HOST=short).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s26l} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --nocapture
grep -E "pipelined batches" $L/gpu.log
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
DISPATCH_HOST=short step 200 dispatch "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^host-fed|noop batch split|into pinned" $L/dispatch.log | grep -v unchecked
exit 0
