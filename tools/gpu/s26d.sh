#!/usr/bin/env bash
# Session 26: where compact records change the pass (phase-timing build of the dispatch
# bench, .gpu/b/dispatch-phases, DISPATCH_HOST=short: defaults vs full 64-byte records),
# and streaming compact vs full alternated twice.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s26d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
DISPATCH_HOST=short step 200 dispatch-phases .gpu/b/dispatch-phases --bench --noplot
grep -E "^host-fed|noop batch split" $L/dispatch-phases.log
grep -A14 "phases, host-fed noop, relay runs (defaults)\|phases, host-fed noop, relay runs, full 64-byte records:" $L/dispatch-phases.log | grep -E "phases|pass|wait"
for i in 1 2; do
  for r in compact full; do
    if [ $r = full ]; then export STREAMING_FULL_RECORDS=1; else unset STREAMING_FULL_RECORDS; fi
    step 120 streaming-$r-$i "$(bin .gpu/benches/streaming)" --bench --noplot
    grep -E "^persistent" $L/streaming-$r-$i.log
  done
done
exit 0
