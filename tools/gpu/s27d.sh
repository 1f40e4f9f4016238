#!/usr/bin/env bash
# Session 27: do the submit helpers' naps cost the pipelined batch its start? The
# timeline with helpers lingering 50 us (default), 200 us and 1 ms after a pass; the
# 20k rows with the same (DISPATCH_HOST=pipe).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s27d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for us in 50 200 1000; do
  DISPATCH_SPIN_US=$us DISPATCH_HOST=timeline step 60 timeline-$us "$(bin .gpu/benches/dispatch)" --bench --noplot
  grep -E "^timeline" $L/timeline-$us.log | grep -v list
done
DISPATCH_HOST=pipe step 120 pipe "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^host-fed" $L/pipe.log | grep -v unchecked
exit 0
