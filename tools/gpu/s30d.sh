#!/usr/bin/env bash
# Session 30: where a halved batch's time goes (phase-timing build: the joins' laps),
# one producer x 1024 with partners and without, four x 1024 with; then the plain
# build's 1 x 1024, partners on and off, ABAB.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s30d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
cat /sys/devices/system/clocksource/clocksource0/current_clocksource | tee $L/clocksource.txt
P=.gpu/baseline/streaming-phases
STREAMING_ROWS=1x1024,4x1024 step 60 phases-on $P --bench --noplot 'persistent_'
STREAMING_PARTNERS=0 STREAMING_ROWS=1x1024 step 60 phases-off $P --bench --noplot 'persistent_'
for f in phases-on phases-off; do grep -E "^phases|^  [a-z_]+ +[0-9]+ laps|thrpt" $L/$f.log | grep -v "%" ; done
b=$(bin .gpu/benches/streaming)
for v in on off on off; do
  if [ $v = off ]; then STREAMING_PARTNERS=0 STREAMING_ROWS=1x1024 stream_run plain-$v-$RANDOM $b 'persistent_'
  else STREAMING_ROWS=1x1024 stream_run plain-$v-$RANDOM $b 'persistent_'; fi
done
exit 0
