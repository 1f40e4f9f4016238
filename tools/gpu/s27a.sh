#!/usr/bin/env bash
# Session 27: the host's own thread scaling (no GPU: T threads each check and stage
# their share of a 20k batch), whether the driver offers pageable-memory access (HMM),
# then the pipelined batch's ramp (small first pieces) against HEAD before it
# (DISPATCH_HOST=pipe, alternated), and the gpu and hostile suites.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s27a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
{ lscpu; nvidia-smi -q | grep -iE "addressing|persistence"; nproc; } >> $L/device.txt 2>&1
grep -E "Model name|Thread|Core|Socket|NUMA|MHz|Addressing" $L/device.txt
step 60 rates .gpu/tests/resident_lib parallel_rates --ignored --nocapture
grep -E "threads:" $L/rates.log
for i in 1 2; do
  DISPATCH_HOST=pipe step 60 pipe-old-$i .gpu/baseline/dispatch-old --bench --noplot
  grep -E "^host-fed" $L/pipe-old-$i.log | grep -v unchecked
  DISPATCH_HOST=pipe step 60 pipe-new-$i "$(bin .gpu/benches/dispatch)" --bench --noplot
  grep -E "^host-fed" $L/pipe-new-$i.log | grep -v unchecked
done
step 150 gpu "$(bin $T/gpu)" --include-ignored --nocapture
grep -E "pipelined batches" $L/gpu.log | cut -c1-300
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
exit 0
