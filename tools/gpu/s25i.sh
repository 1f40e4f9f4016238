#!/usr/bin/env bash
# Session 25, call i (one H100/H200): what bounds the host-fed 20k axpy batch once its
# check no longer holds the first task back. DISPATCH_HOST=feed (preclaim, runs of
# 4096 and 512, 16 helpers, claim 8) in a build with the no-barrier experiment of s25g
# (RESIDENT_NO_BARRIER=1: each helper commits the part it has just checked; not
# landed), and the landed behaviour (unset) for comparison.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s25i} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for r in nobarrier barrier; do
  if [ $r = nobarrier ]; then export RESIDENT_NO_BARRIER=1; else unset RESIDENT_NO_BARRIER; fi
  DISPATCH_HOST=feed step 200 dispatch-$r "$(bin .gpu/benches/dispatch)" --bench --noplot
  grep -E "^host-fed|^list|noop batch split" $L/dispatch-$r.log
done
exit 0
