#!/usr/bin/env bash
# Session 33: SPARSE_LOOK by default, continued: the machine's clocks; spawned trees and
# streaming, the new build against HEAD's (.gpu/baseline/*-old: session 32's build, the
# old policy); the latency bench's full table on the new build (await rows).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s33d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu --format=csv | tee $L/device.txt
B=.gpu/baseline
for p in "old $B/spawn-old" "new $(bin .gpu/benches/spawn)"; do set -- $p
  step 60 spawn-$1 $2 --bench --noplot; grep -E "^default" $L/spawn-$1.log
done
export STREAMING_ROWS=1x256,4x256,1x1024,4x4096
stream_run stream-old $B/streaming-old 'persistent_'
stream_run stream-new $(bin .gpu/benches/streaming) 'persistent_'
step 60 latency-new "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "relay\): submit \+ (wait|await)|copy\): submit" $L/latency-new.log | grep -v Bench | head -6
exit 0
