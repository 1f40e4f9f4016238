#!/usr/bin/env bash
# Session 27: streaming (1 and 4 producers, batches 256-4096) with the final code (the
# check without rejections) against HEAD before the session, alternated.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s27h} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for i in 1 2; do
  step 150 streaming-old-$i .gpu/baseline/streaming-old --bench --noplot
  grep -E "^persistent" $L/streaming-old-$i.log
  step 150 streaming-new-$i "$(bin .gpu/benches/streaming)" --bench --noplot
  grep -E "^persistent" $L/streaming-new-$i.log
done
exit 0
