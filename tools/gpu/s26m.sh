#!/usr/bin/env bash
# Session 26: the final code's 20k batch rows on an H100 (s26l got an H200):
# DISPATCH_HOST=short, "host-fed" and "host-fed pipelined".
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s26m} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
DISPATCH_HOST=short step 200 dispatch "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^host-fed|noop batch split|into pinned" $L/dispatch.log | grep -v unchecked
exit 0
