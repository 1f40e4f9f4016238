#!/usr/bin/env bash
# Session 32: the workers' scan of the run table with its four loads in flight at once
# (device/src/lists.rs). Suites; the 20k timelines of the new build and HEAD's
# (dispatch-old); the pipelined 20k rows, old/new alternated ABBA.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
D=$(bin .gpu/benches/dispatch); O=.gpu/baseline/dispatch-old
DISPATCH_HOST=timeline step 60 tl-new $D --bench --noplot
DISPATCH_HOST=timeline step 60 tl-old $O --bench --noplot
for f in new old; do echo "-- $f"; grep -h -A3 "^timeline" $L/tl-$f.log | grep -v relayed; done
for p in "old1 $O" "new1 $D" "new2 $D" "old2 $O"; do set -- $p
  DISPATCH_HOST=pipe step 80 pipe-$1 $2 --bench --noplot
  grep -E "^(host-fed pipelined|list), relay runs" $L/pipe-$1.log
done
exit 0
