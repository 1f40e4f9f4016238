#!/usr/bin/env bash
# Session 33: the relay asks L2 for each host-ring run's tasks as it publishes the run
# (worker_flags::RELAY_PREFETCH = 16; DISPATCH_WORKER_FLAGS=20 is the default 4 plus
# it). The workers' cycles per step in the profiling build (dispatch-steps), helpers
# awake; the plain build's timelines; the pipelined 20k rows alternated ABBA. Then the
# one-task round trip with SPARSE_LOOK (flags 12) and RELAY_PREFETCH (20) against the
# default (4), alternated four times in one process each.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s33b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
D=$(bin .gpu/benches/dispatch); S=.gpu/baseline/dispatch-steps
for f in 4 20; do
  DISPATCH_WORKER_FLAGS=$f DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 step 60 tl-steps-$f $S --bench --noplot
done
for f in 4 20; do
  DISPATCH_WORKER_FLAGS=$f DISPATCH_HOST=timeline step 60 tl-$f $D --bench --noplot
done
for f in steps-4 steps-20 4 20; do echo "-- $f"; grep -h -A12 "^timeline" $L/tl-$f.log | grep -E "^timeline|published|done|copy|find|claim|sum|total" | grep -v "resident list" | head -24; done
for f in 4 20 20 4; do
  DISPATCH_WORKER_FLAGS=$f DISPATCH_HOST=pipe step 80 pipe-$f-$RANDOM $D --bench --noplot
done
grep -H -E "^(host-fed pipelined|list), relay runs" $L/pipe-*.log | cut -c1-150
LATENCY_FLAGS_AB=4,12,20 step 120 latency-ab "$(bin .gpu/benches/latency)" --bench --noplot
grep "^flags" $L/latency-ab.log
exit 0
