#!/usr/bin/env bash
# Session 33: worker_flags::READ_AHEAD (16): the next slot claimed early, as PRECLAIM,
# and its host task read before the current task's body. The GPU suite (its policy test
# runs READ_AHEAD too); timelines of the default (12), +PRECLAIM (14), +READ_AHEAD (28);
# the pipelined 20k rows, default against READ_AHEAD, ABBA.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s33f} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
D=$(bin .gpu/benches/dispatch)
for f in 12 14 28; do
  DISPATCH_WORKER_FLAGS=$f DISPATCH_HOST=timeline step 60 tl-$f $D --bench --noplot
  grep -h -A40 "^timeline" $L/tl-$f.log | grep -E "^timeline .*(pipelined|list)|done by" | grep -A1 -E "pipelined|list" | grep -v "^--"
done
for p in "a1 12" "b1 28" "b2 28" "a2 12"; do set -- $p
  DISPATCH_WORKER_FLAGS=$2 DISPATCH_HOST=pipe step 80 pipe-$1-$2 $D --bench --noplot
  grep -E "^(host-fed pipelined|list), relay runs (\(defaults\)|again)" $L/pipe-$1-$2.log | cut -c1-150
done
exit 0
