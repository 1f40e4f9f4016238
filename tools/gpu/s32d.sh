#!/usr/bin/env bash
# Session 32: what the device's pace on host-fed records depends on. Timelines with the
# workers' claim 1 (default), pre-claimed, claim 2 and 4; then DISPATCH_HOST=feed (the
# host-fed rows with preclaim, runs of 4096 / 512, 16 submit threads, claim 2 / 4 / 8).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
D=$(bin .gpu/benches/dispatch)
DISPATCH_HOST=timeline step 60 tl-default $D --bench --noplot
DISPATCH_HOST=timeline DISPATCH_PRECLAIM=1 step 60 tl-preclaim $D --bench --noplot
DISPATCH_HOST=timeline DISPATCH_CLAIM=2 step 60 tl-claim2 $D --bench --noplot
DISPATCH_HOST=timeline DISPATCH_CLAIM=4 step 60 tl-claim4 $D --bench --noplot
for f in default preclaim claim2 claim4; do echo "-- $f"; grep -h -A3 "^timeline" $L/tl-$f.log | grep -v relayed; done
DISPATCH_HOST=feed step 200 feed $D --bench --noplot
grep -E "^(host-fed|list|variant)" $L/feed.log
exit 0
