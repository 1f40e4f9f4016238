#!/usr/bin/env bash
# Session 25, call f (one H100/H200): the 20k batch through submit_unchecked (no host
# check: the bound for a check that overlapped the device), beside the checked path,
# in DISPATCH_HOST=short; and the hostile and streams suites on the session's code.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s25f} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
step 60 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
DISPATCH_HOST=short step 300 dispatch "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^variant|^host-fed|noop batch split|^device copy|^CUDA Graph replay, PDL" $L/dispatch.log
exit 0
