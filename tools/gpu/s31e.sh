#!/usr/bin/env bash
# Session 31: the one-line reservation with the scan's gap fix (s31d hung at eight
# producers x 256: a ticket done behind a gap was popped). The suites (with the new
# eight-producer streamed test); phases of HEAD's build and the new one alternated at
# 1, 4 and 8 producers x 256; plain 4 x 256 and 8 x 256 old/new.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s31e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for t in 1 2 4 8 12 16; do .gpu/freq $t tp; done | tee $L/freq-tp.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
new=$(bin .gpu/benches/streaming) old=.gpu/baseline/streaming-old
i=0
for v in new old old new; do
  i=$((i+1))
  if [ $v = old ]; then b=.gpu/phase/streaming-phase-old; else b=.gpu/phase/streaming-phase; fi
  STREAMING_ROWS=1x256,4x256,8x256 step 100 phases-$v-$i $b --bench --noplot persistent_
  echo "phases-$v-$i crit: $(grep -A2 -E '^stream_noop/persistent' "$L/phases-$v-$i.log" | grep thrpt | grep -v '%' | awk '{printf "%s ", $4}')"
done
i=0
for v in old new new old; do
  i=$((i+1))
  if [ $v = old ]; then b=$old; else b=$new; fi
  STREAMING_ROWS=4x256,8x256 stream_run plain-$v-$i $b 'persistent_'
done
exit 0
