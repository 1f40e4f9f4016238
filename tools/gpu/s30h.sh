#!/usr/bin/env bash
# Session 30: the GPU suites on the code after the review's fixes; one producer x 1024
# and four x 1024 with partners and without, ABBA.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s30h} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
b=$(bin .gpu/benches/streaming)
i=0
for v in on off off on; do
  i=$((i+1))
  if [ $v = off ]; then STREAMING_PARTNERS=0 STREAMING_ROWS=1x1024,4x1024 stream_run plain-$i-$v $b 'persistent_'
  else STREAMING_ROWS=1x1024,4x1024 stream_run plain-$i-$v $b 'persistent_'; fi
done
exit 0
