#!/usr/bin/env bash
# Session 31: the reservation's lock down to one line (run ends and the registration
# after it), against HEAD, same rows, ABBA x 2; the phases of the new build; the suites.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s31c} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
new=$(bin .gpu/benches/streaming) old=.gpu/baseline/streaming-old
i=0
for v in old new new old old new new old; do
  i=$((i+1))
  if [ $v = old ]; then b=$old; else b=$new; fi
  STREAMING_ROWS=1x256,4x256 stream_run $v-$i $b 'persistent_'
done
STREAMING_ROWS=1x256,4x256 step 90 phases .gpu/phase/streaming-phase --bench --noplot persistent_
grep -A13 "^phases" $L/phases.log
exit 0
