#!/usr/bin/env bash
# Session 32: the look for children after every 4th task only (worker_flags::SPARSE_LOOK,
# flags 12 against the default 4), host-fed and list: the profiling build's step counts,
# then the plain build's pipe rows, alternated ABBA.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32k} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader | tee $L/device.txt
D=$(bin .gpu/benches/dispatch); S=.gpu/baseline/dispatch-steps
DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 step 60 tl-steps-4 $S --bench --noplot
DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 DISPATCH_WORKER_FLAGS=12 step 60 tl-steps-12 $S --bench --noplot
for f in 4 12; do echo "-- flags $f"; grep -h -A4 "^timeline" $L/tl-steps-$f.log | grep -E "^timeline|device steps|done by"; done
for p in "4a 4" "12a 12" "12b 12" "4b 4"; do set -- $p
  DISPATCH_HOST=pipe DISPATCH_WORKER_FLAGS=$2 step 80 pipe-$1 $D --bench --noplot
  grep -E "^(host-fed pipelined|list), relay runs" $L/pipe-$1.log | cut -c1-130
done
exit 0
