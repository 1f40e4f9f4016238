#!/usr/bin/env bash
# Session 30: the split that follows the partners' pace. Phase-timing 1 x 1024 with
# partners; then the plain build, 1 x 1024 and 4 x 1024, partners on and off, ABBAAB.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s30e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
STREAMING_ROWS=1x1024 step 60 phases-on .gpu/baseline/streaming-phases --bench --noplot 'persistent_'
grep -E "^phases|^  [a-z_]+ +[0-9]+ laps|thrpt" $L/phases-on.log | grep -v "%"
b=$(bin .gpu/benches/streaming)
i=0
for v in on off off on on off; do
  i=$((i+1))
  if [ $v = off ]; then STREAMING_PARTNERS=0 STREAMING_ROWS=1x1024,4x1024 stream_run plain-$i-$v $b 'persistent_'
  else STREAMING_ROWS=1x1024,4x1024 stream_run plain-$i-$v $b 'persistent_'; fi
done
exit 0
