#!/usr/bin/env bash
# Session 32: the workers' cycles per step of the persistent loop (a profiling build,
# RESIDENT_DEVICE_TIMING=1: dispatch-steps), host-fed against resident list, in the
# timelines (helpers awake); the plain build's timelines beside it (what the counters
# perturb); the suites on the plain build (KernelParams grew a field).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32j} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,clocks.sm --format=csv,noheader | tee $L/device.txt
D=$(bin .gpu/benches/dispatch); S=.gpu/baseline/dispatch-steps
DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 step 60 tl-steps $S --bench --noplot
DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 step 60 tl-plain $D --bench --noplot
for f in steps plain; do echo "-- $f"; grep -h -A4 "^timeline" $L/tl-$f.log | grep -v relayed; done
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
exit 0
