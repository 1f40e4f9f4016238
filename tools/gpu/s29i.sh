#!/usr/bin/env bash
# Session 29: where the time outside submit and wait goes under four producers: the
# phase-timing build with the ticket's making and the time between a wait and the next
# submit (the waited ticket's drop), twice.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s29i} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
ROWS='persistent_(1|4)_threads/256$'
for i in 1 2; do
  step 60 phases-$i .gpu/baseline/streaming-phases --bench --noplot "$ROWS"
  grep -E "thrpt|^phases|^  [a-z_]+ +[0-9]+ laps" $L/phases-$i.log | grep -v "%" | grep -B1 -A12 -E "x 256:"
done
exit 0
