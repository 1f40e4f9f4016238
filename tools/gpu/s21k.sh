#!/usr/bin/env bash
# Session 21: is the relay's per-poll `peers` read the 0.5 us? Latency, old and new
# builds alternated, the new one reading `peers` every 16th poll only.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s21k} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for i in 1; do
  step 45 latency-old-$i .gpu/baseline/latency-old --bench --noplot
  grep -E "relay\): submit \+ wait|first task after" $L/latency-old-$i.log | head -2
  step 45 latency-new-$i "$(bin .gpu/benches/latency)" --bench --noplot
  grep -E "relay\): submit \+ wait|first task after" $L/latency-new-$i.log | head -2
done
exit 0
