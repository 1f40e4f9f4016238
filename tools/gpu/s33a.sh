#!/usr/bin/env bash
# Session 33: the helpers' own crew (host/queue/crew.rs: parked on one futex, woken by
# one call) against rayon's pool (HEAD's build, .gpu/baseline/*-old). Timelines of the
# 20k batches with the helpers asleep at each start (the default) and awake, the
# pipelined 20k rows alternated ABBA, the crew's chained wake-up;
# then the GPU suites on the new code. (Streaming and latency: s33b.)
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s33a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
B=.gpu/baseline; D=$(bin .gpu/benches/dispatch); O=$B/dispatch-old
tl() { grep -h -A40 "^timeline $2" $L/$1.log | grep -E "^timeline|published|done" | head -3; }
DISPATCH_HOST=timeline step 60 tl-old $O --bench --noplot
DISPATCH_HOST=timeline step 60 tl-new $D --bench --noplot
RESIDENT_HELPER_WAKE=chain DISPATCH_HOST=timeline step 60 tl-chain $D --bench --noplot
DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 step 60 tl-awake-new $D --bench --noplot
for f in old new chain awake-new; do echo "-- $f"; tl tl-$f "noop, submit_pipelined"; tl tl-$f "axpy, submit_pipelined"; done
for p in "old1 $O" "new1 $D" "chain1 $D" "new2 $D" "old2 $O"; do set -- $p
  case $1 in chain*) export RESIDENT_HELPER_WAKE=chain;; *) unset RESIDENT_HELPER_WAKE;; esac
  DISPATCH_HOST=pipe step 80 pipe-$1 $2 --bench --noplot
  grep -E "^host-fed pipelined, relay runs" $L/pipe-$1.log | cut -c1-130
done
unset RESIDENT_HELPER_WAKE
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
exit 0
