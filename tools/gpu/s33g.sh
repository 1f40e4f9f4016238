#!/usr/bin/env bash
# Session 33: READ_AHEAD in the profiling build (RESIDENT_DEVICE_TIMING=1,
# dispatch-steps): the workers' cycles a step, default (12) against READ_AHEAD (28), the
# 20k timelines with the helpers awake.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s33g} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
S=.gpu/baseline/dispatch-steps
for f in 12 28; do
  DISPATCH_WORKER_FLAGS=$f DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 step 60 tl-steps-$f $S --bench --noplot
  grep -A3 "^timeline .*pipelined" $L/tl-steps-$f.log | grep -E "timeline|steps"
done
exit 0
