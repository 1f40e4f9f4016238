#!/usr/bin/env bash
# Session 28: pipelined parts in rounds (one a thread: 8 x 128, 8 x 256, then 512)
# against 128, 128, 256, then 512 (prev, 5fca7ca): the 20k rows (DISPATCH_HOST=pipe),
# the timelines, then the suites on the new code.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s28e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
DISPATCH_HOST=pipe step 80 pipe-prev .gpu/baseline/dispatch-prev --bench --noplot
grep -E "^host-fed pipelined" $L/pipe-prev.log
DISPATCH_HOST=pipe step 80 pipe-new "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^host-fed pipelined" $L/pipe-new.log
DISPATCH_SPIN_US=1000 DISPATCH_HOST=timeline step 20 timeline-prev .gpu/baseline/dispatch-prev --bench --noplot
grep -E "^timeline" $L/timeline-prev.log | grep -v submit:
DISPATCH_SPIN_US=1000 DISPATCH_HOST=timeline step 20 timeline-new "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^timeline" $L/timeline-new.log | grep -v submit:
step 60 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 40 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
exit 0
