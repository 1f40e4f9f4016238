#!/usr/bin/env bash
# Session 32: a pass's helpers woken by the first helper, not all by the caller
# (host/queue/helpers.rs). Timelines of this build and the one before (dispatch-old),
# helpers asleep as by default, then this build's with helpers awake; the pipelined 20k
# rows old/new alternated ABBA.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32h} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
D=$(bin .gpu/benches/dispatch); O=.gpu/baseline/dispatch-old
DISPATCH_HOST=timeline step 60 tl-old $O --bench --noplot
DISPATCH_HOST=timeline step 60 tl-new $D --bench --noplot
DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 step 60 tl-new-awake $D --bench --noplot
DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 step 60 tl-old-awake $O --bench --noplot
for f in old new new-awake old-awake; do echo "-- $f"; grep -h -A3 "^timeline .*pipelined" $L/tl-$f.log | grep -v relayed; done
for p in "old1 $O" "new1 $D" "new2 $D" "old2 $O"; do set -- $p
  DISPATCH_HOST=pipe step 80 pipe-$1 $2 --bench --noplot
  grep -E "^(host-fed|list), relay runs" $L/pipe-$1.log
done
exit 0
