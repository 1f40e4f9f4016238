#!/usr/bin/env bash
# Session 25, call j (one H100/H200): the large batch's pass timed apart (phase-timing
# build of the dispatch bench, .gpu/b/dispatch-phases): when each thread of the pass
# joined, finished its checks, passed the barrier and finished staging, from the
# pass's start; for the 20k noop and axpy batches. DISPATCH_HOST=short.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s25j} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
DISPATCH_HOST=short step 200 dispatch-phases .gpu/b/dispatch-phases --bench --noplot
grep -E "^host-fed|noop batch split" $L/dispatch-phases.log
grep -A18 "phases, host-fed noop, relay runs (defaults)\|phases, host-fed axpy, relay runs (defaults)" $L/dispatch-phases.log | grep -E "phases|pass|check|stage|commit|room|wait|rest"
exit 0
