#!/usr/bin/env bash
# Session 28: the check's prefetch distance and a fused check + stage on cold streamed
# tasks (host only), then streaming with a run table of 64 entries (new) against 32
# (old, HEAD bf44cc0), alternated.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s28b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 60 cold .gpu/tests/resident_lib cold_stream --ignored --nocapture
grep -E "batch of" $L/cold.log
for i in 1 2; do
  step 150 streaming-old-$i .gpu/baseline/streaming-old --bench --noplot
  grep -E "^persistent" $L/streaming-old-$i.log
  step 150 streaming-new-$i "$(bin .gpu/benches/streaming)" --bench --noplot
  grep -E "^persistent" $L/streaming-new-$i.log
done
exit 0
