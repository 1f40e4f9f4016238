#!/usr/bin/env bash
# Session 32: the bound of a device-checked host-fed batch. HEAD's dispatch bench
# against the same build with the pass's host check skipped (tools/gpu/s32b-nocheck.patch,
# an experiment build, never committed): when the 20k batch's tasks complete (timeline),
# then the pipelined rows (noop us, axpy % of copy), alternated.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
D=$(bin .gpu/benches/dispatch); N=.gpu/baseline/dispatch-nocheck
DISPATCH_HOST=timeline step 60 timeline-head $D --bench --noplot
DISPATCH_HOST=timeline step 60 timeline-nocheck $N --bench --noplot
grep -h "^timeline" $L/timeline-*.log
for p in "head $D" "nocheck $N" "nocheck2 $N" "head2 $D"; do set -- $p
  DISPATCH_HOST=pipe step 80 pipe-$1 $2 --bench --noplot
  grep -E "^(host-fed pipelined|list), relay runs" $L/pipe-$1.log
done
exit 0
