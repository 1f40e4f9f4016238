#!/usr/bin/env bash
# Session 31: the cores' clock as more run (tools/gpu/probe/freq.c), alone and beside
# four producers x 256; the phases of HEAD's build and of the one-line reservation,
# alternated, at 1, 4 and 8 producers x 256; plain 8 x 256 old/new.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s31d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for t in 1 2 4 8 16; do .gpu/freq $t; done | tee $L/freq.txt
new=$(bin .gpu/benches/streaming) old=.gpu/baseline/streaming-old
( sleep 12; echo "beside 4 x 256:"; .gpu/freq 1; sleep 1; .gpu/freq 1 ) >> $L/freq.txt &
STREAMING_ROWS=4x256 stream_run freq-beside $new 'persistent_'
wait; cat $L/freq.txt
i=0
for v in old new new old; do
  i=$((i+1))
  if [ $v = old ]; then b=.gpu/phase/streaming-phase-old; else b=.gpu/phase/streaming-phase; fi
  STREAMING_ROWS=1x256,4x256,8x256 step 120 phases-$v-$i $b --bench --noplot persistent_
  grep -E "^stream_noop|thrpt" $L/phases-$v-$i.log | grep -v "%" | paste - - | awk '{print $1, $6}'
done
i=0
for v in old new new old; do
  i=$((i+1))
  if [ $v = old ]; then b=$old; else b=$new; fi
  STREAMING_ROWS=8x256 stream_run eight-$v-$i $b 'persistent_'
done
exit 0
