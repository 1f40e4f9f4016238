#!/usr/bin/env bash
# Session 30: what four producers x 256 share. The host's topology, the scaling of
# producers at batch 256 (1, 2, 4, 8), twice; one phase-timing run of 1, 4 and 8.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s30b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
(lscpu; numactl -H 2>/dev/null; nvidia-smi topo -m) > $L/topology.txt 2>&1
grep -E "Model name|Socket|Thread|Core|NUMA|L3" $L/topology.txt
b=$(bin .gpu/benches/streaming)
for i in 1 2; do
  STREAMING_ROWS=1x256,2x256,4x256,8x256,1x1024,4x1024 stream_run scaling-$i $b 'persistent_'
done
STREAMING_ROWS=1x256,4x256,8x256 step 90 phases .gpu/baseline/streaming-phases --bench --noplot 'persistent_'
grep -E "^phases|^  [a-z_]+ +[0-9]+ laps" $L/phases.log | head -80
exit 0
