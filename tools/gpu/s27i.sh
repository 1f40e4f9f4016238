#!/usr/bin/env bash
# Session 27: streaming with the final code against the same without the check's
# rejection-free common path (host/validate.rs and host/registry.rs of 00f90f3), alternated.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s27i} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for i in 1 2; do
  step 150 streaming-nofast-$i .gpu/baseline/streaming-nofast --bench --noplot
  grep -E "^persistent" $L/streaming-nofast-$i.log
  step 150 streaming-new-$i "$(bin .gpu/benches/streaming)" --bench --noplot
  grep -E "^persistent" $L/streaming-new-$i.log
done
exit 0
