#!/usr/bin/env bash
# Session 27: the ramp (s27a) and the check without rejections on its common path,
# against HEAD before the session (DISPATCH_HOST=pipe, alternated); the thread rates again.
# "mid" is the ramp alone (8be30dc), "old" HEAD before the session (00f90f3).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s27b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
{ lscpu; nvidia-smi -q | grep -iE "addressing|persistence"; nproc; } >> $L/device.txt 2>&1
grep -E "Model name|Thread|Core|Socket|NUMA|MHz|Addressing" $L/device.txt
step 60 rates .gpu/tests/resident_lib parallel_rates --ignored --nocapture
grep -E "threads:" $L/rates.log
for i in 1 2; do
  DISPATCH_HOST=pipe step 60 pipe-old-$i .gpu/baseline/dispatch-old --bench --noplot
  grep -E "^host-fed" $L/pipe-old-$i.log | grep -v unchecked
  DISPATCH_HOST=pipe step 60 pipe-mid-$i .gpu/baseline/dispatch-mid --bench --noplot
  grep -E "^host-fed" $L/pipe-mid-$i.log | grep -v unchecked
  DISPATCH_HOST=pipe step 60 pipe-new-$i "$(bin .gpu/benches/dispatch)" --bench --noplot
  grep -E "^host-fed" $L/pipe-new-$i.log | grep -v unchecked
done
exit 0
