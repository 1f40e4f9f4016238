#!/usr/bin/env bash
# Session 32: the 20k batch's timeline with the host's publication and the relay's
# pickup beside the completions (benches/dispatch.rs, DISPATCH_HOST=timeline): helpers
# as by default, then lingering 1 ms (as if awake when a batch comes).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32c} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
D=$(bin .gpu/benches/dispatch)
DISPATCH_HOST=timeline step 60 timeline $D --bench --noplot
DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 step 60 timeline-awake $D --bench --noplot
grep -h -A3 "^timeline" $L/timeline*.log
exit 0
