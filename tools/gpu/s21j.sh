#!/usr/bin/env bash
# Session 21, last call: the relay's warp-wide moves (32 tasks per spawn-ring claim) and
# its `peers` word; before that, the peer path after the review's fixes (UNCHECKED children refused, pushes
# from relay and peer tasks refused, closed checked before a position is taken, B's
# close/fault cutting the pushers' entries, separate done/failed counts, batched
# hand-back): the multi suite, the multi bench, the example; and the latency bench
# against the build before the peer path (the relay now also looks at inboxes),
# alternated in this call.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s21j} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nccl_env
step 150 multi "$(multi_bin)" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
step 90 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]|^multi/" $L/multi-bench.log | head -30
step 60 example "$T/multi-gpu"
tail -4 $L/example.log
for i in 1; do
  step 60 latency-old-$i .gpu/baseline/latency-old --bench --noplot
  grep -E "exit|relay\): submit \+ wait" $L/latency-old-$i.log | head -4
  step 60 latency-new-$i "$(bin .gpu/benches/latency)" --bench --noplot
  grep -E "exit|relay\): submit \+ wait" $L/latency-new-$i.log | head -4
done
step 100 gpu "$(bin $T/gpu)" --include-ignored --test-threads 1
exit 0
