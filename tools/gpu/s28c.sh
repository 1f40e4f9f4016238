#!/usr/bin/env bash
# Session 28: the run table of 64 and the check 64 ahead (ad362ba): where
# producers' time goes (phase-timing), and streaming against bf44cc0, alternated.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s28c} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 60 cold .gpu/tests/resident_lib cold_stream --ignored --nocapture
grep -E "batch of" $L/cold.log | head -12
step 150 streaming-phases .gpu/baseline/streaming-phases --bench --noplot
grep -E "^persistent|^phases|room|commit|producer_lock|check  " $L/streaming-phases.log | head -60
for i in 1 2; do
  step 150 streaming-old-$i .gpu/baseline/streaming-old --bench --noplot
  grep -E "^persistent" $L/streaming-old-$i.log
  step 150 streaming-new-$i "$(bin .gpu/benches/streaming)" --bench --noplot
  grep -E "^persistent" $L/streaming-new-$i.log
done
exit 0
