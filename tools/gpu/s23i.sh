#!/usr/bin/env bash
# Session 23: the fix for the hostile suite's failures under contention (the queue
# memory's zeroing now lands before the first launch; shutdown's last scan waits for a
# scan under way): the suite six times on this build, twice on the build before
# (7ccd492) in the same call; the suites that start and stop runtimes.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s23i} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for i in 1 2 3 4 5 6; do
  step 60 hostile-new-$i "$(bin $T/hostile_gpu)" --include-ignored
  grep -E "close returned|ticket then" $L/hostile-new-$i.log | cut -c1-300 | head -2
  if [ $i -le 2 ]; then
    step 60 hostile-old-$i .gpu/baseline/hostile_gpu --include-ignored
    grep -E "^failures:|^    [a-z_]+$" $L/hostile-old-$i.log | head -4
  fi
done
step 90 gpu "$(bin $T/gpu)" --include-ignored
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
step 60 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 90 faults "$(bin $T/gpu_faults)" --include-ignored
exit 0
