#!/usr/bin/env bash
# Session 31: the GPU suites on HEAD (46a22fc's partners, not GPU-run before); how
# evenly four producers x 256 are served (each producer's finish time per pass).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s31a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
b=$(bin .gpu/benches/streaming)
for i in 1 2; do
  STREAMING_ROWS=1x256,4x256,8x256 stream_run spread-$i $b 'persistent_'
  grep "finished at" $L/spread-$i.log
done
exit 0
