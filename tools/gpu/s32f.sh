#!/usr/bin/env bash
# Session 32: whether more resident warps hide the host-fed records' PCIe reads:
# DISPATCH_HOST=feed, which now has a row of 128-thread blocks, 5 per SM (20 warps an
# SM against 16).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32f} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
D=$(bin .gpu/benches/dispatch)
DISPATCH_HOST=feed step 200 feed $D --bench --noplot
grep -E "^(host-fed pipelined|list|variant)|CUDA backend" $L/feed.log
exit 0
