#!/usr/bin/env bash
# Session 30: a run table of 128 entries (HEAD) against 64 (the commit before), ABBA on
# 1, 4 and 8 producers x 256; the 20k pipelined and resident-list rows of both; the GPU
# suites and the one-task latencies on HEAD.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s30f} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
i=0
for v in 64 128 128 64; do
  i=$((i+1))
  b=.gpu/baseline/streaming-64; [ $v = 128 ] && b=$(bin .gpu/benches/streaming)
  STREAMING_ROWS=1x256,4x256,8x256 stream_run streaming-$i-$v $b 'persistent_'
done
DISPATCH_HOST=pipe step 80 pipe-64 .gpu/baseline/dispatch-64 --bench --noplot
grep -E "^(host-fed pipelined|list), relay runs \(defaults\)" $L/pipe-64.log
DISPATCH_HOST=pipe step 80 pipe-128 "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^(host-fed pipelined|list), relay runs \(defaults\)" $L/pipe-128.log
step 60 latency "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "submit \+ wait|submit \+ await" $L/latency.log | head -8
exit 0
