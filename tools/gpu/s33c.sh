#!/usr/bin/env bash
# Session 33: SPARSE_LOOK on by default (with a look after any task that pushed a
# child). The GPU suites on it; the pipelined 20k rows with the new default (flags 12)
# against the old policy in the same binary (DISPATCH_WORKER_FLAGS=4), ABBA; the
# one-task round trip, old and new policies alternated in one process.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s33c} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
D=$(bin .gpu/benches/dispatch)
for p in "old1 4" "new1 12" "new2 12" "old2 4"; do set -- $p
  DISPATCH_WORKER_FLAGS=$2 DISPATCH_HOST=pipe step 80 pipe-$1 $D --bench --noplot
  grep -E "^(host-fed pipelined|list), relay runs (\(defaults\)|again)" $L/pipe-$1.log | cut -c1-150
done
LATENCY_FLAGS_AB=4,12 step 120 latency-ab "$(bin .gpu/benches/latency)" --bench --noplot
grep "^flags" $L/latency-ab.log
exit 0
