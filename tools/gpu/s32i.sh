#!/usr/bin/env bash
# Session 32: what the workers' read of a host-ring record costs the device's pace. An
# experiment build (tools/gpu/s32i-noread.patch, never committed) does not read compact
# host-ring records at all: each lane's copy is a noop built in place (valid for the
# noop rows only; its axpy rows run noops). Timelines and pipe rows, HEAD against it.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32i} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
H=.gpu/baseline/dispatch-old; X=.gpu/baseline/dispatch-noread
DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 step 60 tl-head $H --bench --noplot
DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 step 60 tl-noread $X --bench --noplot
for f in head noread; do echo "-- $f"; grep -h -A3 "^timeline noop" $L/tl-$f.log | grep -v relayed; done
for p in "head $H" "noread $X"; do set -- $p
  DISPATCH_HOST=pipe step 80 pipe-$1 $2 --bench --noplot
  grep -E "^(host-fed|list)" $L/pipe-$1.log | cut -c1-90
done
exit 0
