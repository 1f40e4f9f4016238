#!/usr/bin/env bash
# Session 25, call g (one H100/H200), an experiment in a build not committed: the large
# batch's one pass without its barrier (RESIDENT_NO_BARRIER: each helper stages and
# commits the piece it has just checked, so the workers start while later parts are
# checked; a refusal could then no longer void the whole batch). How far would a
# pipelined check take the 20k axpy batch? DISPATCH_HOST=short, with and without.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s25g} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for r in nobarrier barrier; do
  if [ $r = nobarrier ]; then export RESIDENT_NO_BARRIER=1; else unset RESIDENT_NO_BARRIER; fi
  DISPATCH_HOST=short step 200 dispatch-$r "$(bin .gpu/benches/dispatch)" --bench --noplot
  grep -E "^host-fed|noop batch split" $L/dispatch-$r.log
done
exit 0
