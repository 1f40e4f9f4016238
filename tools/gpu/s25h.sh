#!/usr/bin/env bash
# Session 25, call h (one H100/H200): submit_unchecked's large batches in the helpers'
# one pass (no check) instead of piece-by-piece hand-offs. The gpu suite (new:
# large_unchecked_batches_exactly_once) and DISPATCH_HOST=short (its unchecked rows
# against s25f/s25g's, where they went by publish_parallel).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s25h} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored
DISPATCH_HOST=short step 200 dispatch "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^host-fed|noop batch split" $L/dispatch.log
exit 0
