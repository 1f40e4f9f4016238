#!/usr/bin/env bash
# Session 27: pipelined parts of 256 (new) against parts of 1024 (prev, the s27d
# build): the 20k rows (DISPATCH_HOST=pipe, alternated), then the timeline of each.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s27e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for i in 1 2; do
  DISPATCH_HOST=pipe step 120 pipe-prev-$i .gpu/baseline/dispatch-prev --bench --noplot
  grep -E "^host-fed pipelined" $L/pipe-prev-$i.log
  DISPATCH_HOST=pipe step 120 pipe-new-$i "$(bin .gpu/benches/dispatch)" --bench --noplot
  grep -E "^host-fed pipelined" $L/pipe-new-$i.log
done
DISPATCH_HOST=timeline step 60 timeline-prev .gpu/baseline/dispatch-prev --bench --noplot
grep -E "^timeline" $L/timeline-prev.log | grep pipelined
DISPATCH_HOST=timeline step 60 timeline-new "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^timeline" $L/timeline-new.log
exit 0
