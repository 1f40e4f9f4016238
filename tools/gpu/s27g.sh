#!/usr/bin/env bash
# Session 27: pipelined parts of 512 (new) against 256 (p256, s27f's new) and 1024
# (prev): the 20k rows (DISPATCH_HOST=pipe, alternated).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s27g} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for i in 1 2; do
  for b in prev p256; do
    DISPATCH_HOST=pipe step 120 pipe-$b-$i .gpu/baseline/dispatch-$b --bench --noplot
    grep -E "^host-fed" $L/pipe-$b-$i.log | grep -v unchecked
  done
  DISPATCH_HOST=pipe step 120 pipe-new-$i "$(bin .gpu/benches/dispatch)" --bench --noplot
  grep -E "^host-fed" $L/pipe-new-$i.log | grep -v unchecked
done
exit 0
