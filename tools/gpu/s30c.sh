#!/usr/bin/env bash
# Session 30: the GPU suites on the halves code (the copy path's halves too); partners
# on and off (STREAMING_PARTNERS=0), same binary, ABBAAB on four rows; the copy path's
# 1 x 1024 with and without; the one-task latencies.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s30c} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
b=$(bin .gpu/benches/streaming)
i=0
for v in on off off on on off; do
  i=$((i+1))
  if [ $v = off ]; then STREAMING_PARTNERS=0 STREAMING_ROWS=1x256,1x1024,4x256,4x1024 stream_run streaming-$i-$v $b 'persistent_'
  else STREAMING_ROWS=1x256,1x1024,4x256,4x1024 stream_run streaming-$i-$v $b 'persistent_'; fi
done
STREAMING_COPY=1 STREAMING_ROWS=1x1024 stream_run copy-on $b 'persistent_'
STREAMING_COPY=1 STREAMING_PARTNERS=0 STREAMING_ROWS=1x1024 stream_run copy-off $b 'persistent_'
step 60 latency "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "submit \+ wait|submit \+ await" $L/latency.log | head -8
exit 0
