#!/usr/bin/env bash
# Session 32: SPARSE_LOOK on by default (the look for children after every 4th queue
# task, after a child and on idle polls) against HEAD's default (the look after every
# task): spawned trees, the one-task round trip, streaming, the pipelined 20k rows; old
# and new alternated. Then the GPU suite with the new default.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32l} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
B=.gpu/baseline
for p in "old1 $B/spawn-old" "new1 $(bin .gpu/benches/spawn)" "new2 $(bin .gpu/benches/spawn)" "old2 $B/spawn-old"; do set -- $p
  step 60 spawn-$1 $2 --bench --noplot; grep -E "^default" $L/spawn-$1.log
done
for p in "old $B/latency-old" "new $(bin .gpu/benches/latency)"; do set -- $p
  step 60 latency-$1 $2 --bench --noplot; grep -E "relay\): submit \+ wait|await|copy path" $L/latency-$1.log | grep -v Bench | head -6
done
export STREAMING_ROWS=1x256,4x256,1x1024,4x4096
stream_run stream-old $B/streaming-old 'persistent_'
stream_run stream-new $(bin .gpu/benches/streaming) 'persistent_'
for p in "old $B/dispatch-old" "new $(bin .gpu/benches/dispatch)"; do set -- $p
  DISPATCH_HOST=pipe step 80 pipe-$1 $2 --bench --noplot
  grep -E "^(host-fed pipelined|list), relay runs" $L/pipe-$1.log | cut -c1-130
done
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
exit 0
