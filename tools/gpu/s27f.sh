#!/usr/bin/env bash
# Session 27: the pipelined pass's prefix without a lock (new) against parts of 256
# under a lock (p256mutex, s27e's new) and parts of 1024 under a lock (prev, s27d):
# the 20k rows (DISPATCH_HOST=pipe, alternated); the gpu and hostile suites.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s27f} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for i in 1 2; do
  for b in prev p256mutex; do
    DISPATCH_HOST=pipe step 120 pipe-$b-$i .gpu/baseline/dispatch-$b --bench --noplot
    grep -E "^host-fed" $L/pipe-$b-$i.log | grep -v unchecked
  done
  DISPATCH_HOST=pipe step 120 pipe-new-$i "$(bin .gpu/benches/dispatch)" --bench --noplot
  grep -E "^host-fed" $L/pipe-new-$i.log | grep -v unchecked
done
step 150 gpu "$(bin $T/gpu)" --include-ignored --nocapture
grep -E "pipelined batches" $L/gpu.log | cut -c1-300
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
exit 0
