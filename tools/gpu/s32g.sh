#!/usr/bin/env bash
# Session 32: does the lane-local copy of a host-fed task cost the device's pace? An
# experiment build (tools/gpu/s32g-listcopy.patch, never committed) copies every list
# task into each lane's local memory as host-ring tasks are: the list rows of it against
# this build's (timelines, then the pipe rows, which include the list).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32g} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
D=$(bin .gpu/benches/dispatch); X=.gpu/baseline/dispatch-listcopy
DISPATCH_HOST=timeline step 60 tl-head $D --bench --noplot
DISPATCH_HOST=timeline step 60 tl-listcopy $X --bench --noplot
for f in head listcopy; do echo "-- $f"; grep -h -A3 "^timeline .*list" $L/tl-$f.log | grep -v relayed; done
for p in "head $D" "listcopy $X"; do set -- $p
  DISPATCH_HOST=pipe step 80 pipe-$1 $2 --bench --noplot
  grep -E "^(host-fed pipelined|list), relay runs" $L/pipe-$1.log
done
exit 0
